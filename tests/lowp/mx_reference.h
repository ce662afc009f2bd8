// An independent reference for OCP MX blocks written from the spec (MX v1.0, section 6.3)
// and sharing nothing with src/lowp: the shared exponent by frexp on the exact amax, each
// element rounded by reference.h on the exact V / X (MXINT8 by round-half-even on V / X
// * 64), the elements written into the block bit by bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fixq/lowp.h"
#include "lowp/reference.h"

namespace fixq::mx_ref {

struct Spec {
  MxType type;
  int bits;
  int emax;
  LowpType element;  // unused for MXINT8
};

inline std::vector<Spec> specs() {
  return {{MxType::Fp8E4m3, 8, 8, LowpType::E4m3fn},  {MxType::Fp8E5m2, 8, 15, LowpType::E5m2},
          {MxType::Fp6E2m3, 6, 2, LowpType::E2m3fn},  {MxType::Fp6E3m2, 6, 4, LowpType::E3m2fn},
          {MxType::Fp4E2m1, 4, 2, LowpType::E2m1fn},  {MxType::Int8, 8, 0, LowpType::E4m3fn}};
}

// Writes code (bits wide) at element position i of the block's element bit string.
inline void put_bits(std::vector<uint8_t>& block, int bits, int i, uint32_t code) {
  for (int b = 0; b < bits; ++b)
    if ((code >> b) & 1) block[1 + static_cast<size_t>((i * bits + b) / 8)] |= static_cast<uint8_t>(1u << ((i * bits + b) % 8));
}

inline uint32_t get_bits(const uint8_t* block, int bits, int i) {
  uint32_t code = 0;
  for (int b = 0; b < bits; ++b) code |= ((block[1 + (i * bits + b) / 8] >> ((i * bits + b) % 8)) & 1u) << b;
  return code;
}

inline std::vector<uint8_t> reference_block(const Spec& s, const float* v) {
  std::vector<uint8_t> block(static_cast<size_t>(1 + 32 * s.bits / 8), 0);
  double amax = 0.0;
  for (int i = 0; i < 32; ++i) {
    if (!std::isfinite(v[i])) {
      block[0] = 0xFF;
      return block;
    }
    amax = std::max(amax, std::fabs(static_cast<double>(v[i])));
  }
  int s_exp = -127;
  if (amax > 0.0) {
    int e;
    std::frexp(amax, &e);  // amax = m * 2^e, m in [0.5, 1): floor(log2 amax) = e - 1
    s_exp = std::clamp(e - 1 - s.emax, -127, 127);
  }
  block[0] = static_cast<uint8_t>(s_exp + 127);
  const lowp_ref::Ref ref(s.element);
  for (int i = 0; i < 32; ++i) {
    const double scaled = std::ldexp(static_cast<double>(v[i]), -s_exp);  // exact
    uint32_t code;
    if (s.type == MxType::Int8) {
      const double t = scaled * 64.0, f = std::floor(t);
      double r = t - f > 0.5 ? f + 1 : (t - f < 0.5 ? f : (std::fmod(f, 2.0) == 0.0 ? f : f + 1));
      r = std::clamp(r, -127.0, 127.0);
      code = static_cast<uint32_t>(static_cast<int32_t>(r)) & 0xFF;
    } else {
      code = *ref.code_for(ref.round_index(std::fabs(scaled)), std::signbit(scaled), Overflow::Saturate);
    }
    put_bits(block, s.bits, i, code);
  }
  return block;
}

}  // namespace fixq::mx_ref
