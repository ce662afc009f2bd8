// Private: the scalar definition of one encode and one decode, on bit patterns. Every
// instruction set's kernels use these for their tails, so all paths agree to the bit.
// `static`: each instruction-set translation unit gets its own copy (no ODR trap with -m
// flags), as in src/quant/kernels.h.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "lowp/traits.h"

namespace fixq::lowp_detail {

template <LowpType T>
using CodeOf = std::conditional_t<traits(T).bits == 16, uint16_t, uint8_t>;

// The magnitude code of T nearest to the float32 magnitude pattern a (sign clear, not NaN),
// ties to the even code. A result above max_mag means overflow (inf lands there too).
// Normal results: adding 2^(sh-1) - 1 plus the lowest kept bit to the pattern and cutting
// sh bits is round-half-even on the 23-bit mantissa, and a carry correctly bumps the
// exponent. Subnormal results: the significand with its implicit bit, shifted right by
// however far below T's smallest normal the value lies, rounded the same way. All in
// uint32_t: a <= 0x7F800000 leaves room for the additions.
template <LowpType T>
static inline uint32_t round_magnitude(uint32_t a) {
  constexpr Traits t = traits(T);
  constexpr uint32_t sh = 23 - t.m;
  constexpr uint32_t e_norm = 128 - t.bias;  // float32 biased exponent of T's smallest normal
  const uint32_t e = a >> 23;
  if (e >= e_norm) {
    const uint32_t r = a + ((1u << (sh - 1)) - 1) + ((a >> sh) & 1);
    return (r >> sh) - ((127u - t.bias) << t.m);
  }
  const uint32_t s = (a & 0x7FFFFFu) | (e != 0 ? 0x800000u : 0u);
  // Beyond 25 every s < 2^24 rounds to 0 anyway; the cap keeps the shifts in range.
  const uint32_t shift = std::min<uint32_t>(sh + e_norm - std::max<uint32_t>(e, 1), 25);
  return (s + ((1u << (shift - 1)) - 1) + ((s >> shift) & 1)) >> shift;
}

// The code of the float32 pattern x (see fixq/lowp.h for every special case). A NaN into a
// type without NaN gives kNoNanMarker; the front end turns it into an error.
template <LowpType T, Overflow O>
static inline uint32_t encode_bits(uint32_t x) {
  constexpr Traits t = traits(T);
  const uint32_t a = x & 0x7FFFFFFFu;
  const bool negative = (x >> 31) != 0;
  if constexpr (t.special == Special::E8m0) {
    if (a > 0x7F800000u) return kE8m0Nan;
    if (negative || a == 0) return O == Overflow::Default ? kE8m0Nan : 0;
    // Normal: the exponent field, plus one when the mantissa is >= 1/2 (ties up). Subnormal
    // inputs lie below 2^-126: nearest of 2^-127 (code 0) and 2^-126 (code 1).
    const uint32_t code = a < 0x800000u ? (a >= 0x600000u ? 1u : 0u) : (a + 0x400000u) >> 23;
    if (code > t.max_mag) return O == Overflow::Default ? kE8m0Nan : t.max_mag;
    return code;
  } else {
    const uint32_t sign = negative ? 1u << (t.bits - 1) : 0u;
    if (a > 0x7F800000u) {
      if constexpr (t.special == Special::Fnuz) return kFnuzNan;
      if constexpr (t.special == Special::FiniteOnly) return kNoNanMarker;
      return sign | t.nan_mag;
    }
    uint32_t mag = round_magnitude<T>(a);
    if (mag > t.max_mag) {
      if constexpr (O == Overflow::Saturate || t.special == Special::FiniteOnly) {
        mag = t.max_mag;
      } else if constexpr (t.special == Special::Fnuz) {
        return kFnuzNan;
      } else if constexpr (t.special == Special::Ieee) {
        mag = t.inf_mag;
      } else {
        mag = t.nan_mag;
      }
    }
    if constexpr (t.special == Special::Fnuz) {
      if (mag == 0) return 0;  // no negative zero
    }
    return sign | mag;
  }
}

inline constexpr uint32_t kQuietNan = 0x7FC00000u;
inline constexpr uint32_t kSignBit = 0x80000000u;

// The float32 pattern of code (< 2^bits), exactly.
template <LowpType T>
static inline uint32_t decode_bits(uint32_t code) {
  constexpr Traits t = traits(T);
  if constexpr (T == LowpType::Bf16) {
    return code << 16;
  } else if constexpr (t.special == Special::E8m0) {
    if (code == kE8m0Nan) return kQuietNan;
    return code != 0 ? code << 23 : 0x00400000u;  // 2^-127 is a float32 subnormal
  } else {
    constexpr uint32_t sign_bit = 1u << (t.bits - 1);
    const uint32_t neg = (code & sign_bit) != 0 ? kSignBit : 0u;
    const uint32_t mag = code & (sign_bit - 1);
    if constexpr (t.special == Special::Fnuz) {
      if (code == kFnuzNan) return kSignBit | kQuietNan;
    } else if constexpr (t.special == Special::NanAllOnes) {
      if (mag == t.nan_mag) return neg | kQuietNan;
    } else if constexpr (t.special == Special::Ieee) {
      if (mag == t.inf_mag) return neg | 0x7F800000u;
      if (mag > t.inf_mag) {
        // fp16 widens its payload bit for bit (as numpy and ml_dtypes do); e5m2 NaNs decode
        // to the canonical quiet NaN, as ml_dtypes' float8 types do.
        if constexpr (T == LowpType::Fp16) return neg | 0x7F800000u | ((mag & 0x3FFu) << 13);
        return neg | kQuietNan;
      }
    }
    const uint32_t e = mag >> t.m, f = mag & ((1u << t.m) - 1);
    if (e != 0) return neg | ((e + 127u - t.bias) << 23) | (f << (23 - t.m));
    if (f == 0) return neg;
    // Subnormal f * 2^(1 - bias - m): normalize on f's leading bit p.
    const uint32_t p = static_cast<uint32_t>(std::bit_width(f)) - 1;
    return neg | ((p + 1 + 127 - t.bias - t.m) << 23) | ((f - (1u << p)) << (23 - p));
  }
}

// n codes; returns the index of the first NaN into a type without NaN, else -1.
template <LowpType T, Overflow O>
static inline int64_t encode_run(const float* x, int64_t n, CodeOf<T>* codes) {
  int64_t first_nan = -1;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t c = encode_bits<T, O>(std::bit_cast<uint32_t>(x[i]));
    if constexpr (traits(T).special == Special::FiniteOnly) {
      if (c == kNoNanMarker && first_nan < 0) first_nan = i;
    }
    codes[i] = static_cast<CodeOf<T>>(c);
  }
  return first_nan;
}

// n values; a code >= 2^bits decodes to NaN and the first one's index is returned, else -1.
template <LowpType T>
static inline int64_t decode_run(const CodeOf<T>* codes, int64_t n, float* x) {
  int64_t first_bad = -1;
  constexpr uint32_t limit = 1u << traits(T).bits;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t c = codes[i];
    if (c >= limit) {
      if (first_bad < 0) first_bad = i;
      x[i] = std::bit_cast<float>(kQuietNan);
    } else {
      x[i] = std::bit_cast<float>(decode_bits<T>(c));
    }
  }
  return first_bad;
}

}  // namespace fixq::lowp_detail
