// Every lane primitive of a family (src/simd/lanes_<family>.h) applied to arrays, so that
// lanes_test.cpp can hold each family's primitives to the scalar statement of their
// contract, lane by lane. lane_probe_<family>.cpp compiles the body below for its family
// (the AVX-512 one a second time against SIMDe, namespace avx512_emulated).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fixq::lane_probe {

// The inputs: int32 and float arrays of kCount lanes, extreme values included.
inline constexpr int kCount = 64;
struct Inputs {
  std::vector<int32_t> a, b, counts;  // counts in [0, 40]: shift counts, past the lane width too
  std::vector<int64_t> a64, b64, counts64;
  std::vector<float> x, y;            // NaN, infinities, zeros, subnormals and ordinary values
  std::vector<float> dots, dots2;     // finite values, for the fused multiply-add
  std::vector<int32_t> table;       // 257 entries, for gathers
  std::vector<uint16_t> table16;    // 257 entries, for lookup_hi16
  std::vector<uint16_t> halfs;      // fp16 patterns
};

// Per primitive (the names below), the result bits of every lane in order.
using Results = std::map<std::string, std::vector<uint64_t>>;

using Probe = Results (*)(const Inputs&);
namespace avx2 { Results probe(const Inputs&); }
namespace avx512 { Results probe(const Inputs&); }
namespace avx512_emulated { Results probe(const Inputs&); }

}  // namespace fixq::lane_probe
