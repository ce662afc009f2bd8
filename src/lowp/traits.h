// Private: the bit-level parameters of each low-precision type, as compile-time constants
// shared by the scalar reference and the vector kernels.
#pragma once

#include <cstdint>

#include "fixq/lowp.h"

namespace fixq::lowp_detail {

// How a type spends its special codes.
enum class Special {
  Ieee,        // exponent all ones: inf (mantissa 0) or NaN (e5m2, bf16, fp16)
  NanAllOnes,  // only S.1111.111 is NaN, no inf (e4m3fn)
  Fnuz,        // 0x80 is the only NaN, no inf, no -0 (e4m3fnuz, e5m2fnuz, e4m3b11fnuz)
  FiniteOnly,  // every code is a number (float6, float4)
  E8m0,        // unsigned power of two, 0xFF NaN, no zero
};

struct Traits {
  int bits;
  int e;          // exponent bits
  int m;          // mantissa bits
  int bias;
  Special special;
  uint32_t max_mag;  // magnitude code (sign bit clear) of the largest finite value
  uint32_t inf_mag;  // Ieee: magnitude code of infinity
  uint32_t nan_mag;  // Ieee / NanAllOnes: magnitude code of the canonical NaN
};

constexpr Traits traits(LowpType t) {
  switch (t) {
    case LowpType::E4m3fn: return {8, 4, 3, 7, Special::NanAllOnes, 0x7E, 0, 0x7F};
    case LowpType::E4m3fnuz: return {8, 4, 3, 8, Special::Fnuz, 0x7F, 0, 0};
    case LowpType::E5m2: return {8, 5, 2, 15, Special::Ieee, 0x7B, 0x7C, 0x7E};
    case LowpType::E5m2fnuz: return {8, 5, 2, 16, Special::Fnuz, 0x7F, 0, 0};
    case LowpType::E8m0fnu: return {8, 8, 0, 127, Special::E8m0, 0xFE, 0, 0};
    case LowpType::E4m3b11fnuz: return {8, 4, 3, 11, Special::Fnuz, 0x7F, 0, 0};
    case LowpType::E2m3fn: return {6, 2, 3, 1, Special::FiniteOnly, 0x1F, 0, 0};
    case LowpType::E3m2fn: return {6, 3, 2, 3, Special::FiniteOnly, 0x1F, 0, 0};
    case LowpType::E2m1fn: return {4, 2, 1, 1, Special::FiniteOnly, 0x7, 0, 0};
    case LowpType::Bf16: return {16, 8, 7, 127, Special::Ieee, 0x7F7F, 0x7F80, 0x7FC0};
    case LowpType::Fp16: return {16, 5, 10, 15, Special::Ieee, 0x7BFF, 0x7C00, 0x7E00};
  }
  return {};
}

// The fnuz types' single NaN code, and the byte the encoders write for a NaN into a type
// without NaN (not a valid float6/float4 code, so a missed check can never pass unnoticed).
inline constexpr uint32_t kFnuzNan = 0x80;
inline constexpr uint32_t kE8m0Nan = 0xFF;
inline constexpr uint32_t kNoNanMarker = 0xFF;

}  // namespace fixq::lowp_detail
