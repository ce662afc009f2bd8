// Private: the kernel tables behind fixq/lowp.h, one per instruction-set family. The scalar
// table is the definition (built on lowp/element.h and lowp/mx_block.h); every other
// family's kernels must give the same bits for every input.
#pragma once

#include <cstdint>

#include "cpu/registry.h"
#include "fixq/lowp.h"

namespace fixq::lowp_detail {

struct ConvertKernels {
  // n floats -> n codes (uint8_t for types of <= 8 bits, uint16_t for bf16/fp16). A NaN
  // into a type without NaN gets kNoNanMarker; the first one's index is returned, else -1.
  using Encode = int64_t (*)(const float* x, int64_t n, void* codes);
  // n codes -> n floats. A code >= 2^bits decodes to NaN; the first one's index is
  // returned, else -1.
  using Decode = int64_t (*)(const void* codes, int64_t n, float* x);
  Encode encode[kLowpTypeCount][2];  // [type][Overflow]
  Decode decode[kLowpTypeCount];
};

struct MxKernels {
  using Quantize = void (*)(const float* x, int64_t blocks, uint8_t* out);
  using Dequantize = void (*)(const uint8_t* in, int64_t blocks, float* x);
  Quantize quantize[kMxTypeCount];
  Dequantize dequantize[kMxTypeCount];
};

// One instruction-set family's kernels. A null kernel is inherited from the next family.
struct LowpKernels {
  ConvertKernels convert;
  MxKernels mx;
};

// Each family's table, in its own files; *_emulated only in the tests' SIMDe build.
namespace scalar { extern const LowpKernels kLowp; }
namespace avx2 { extern const LowpKernels kLowp; }
namespace avx512 { extern const LowpKernels kLowp; }
namespace avx512_emulated { extern const LowpKernels kLowp; }

// Best first, one entry per family (registry.cpp).
cpu_detail::KernelRegistry<LowpKernels>& registry();

}  // namespace fixq::lowp_detail
