// Private: the scalar arithmetic primitives ggml's reference quantizers are built from,
// reimplemented so that every result is bit-identical to ggml built with gcc on x86-64
// (the build the golden vectors come from), with no undefined behaviour for any input.
//
// Every function is `static inline`: each instruction-set TU gets its own copy, so the
// linker can never hand a scalar TU a copy compiled with -mavx2.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "lowp/element.h"

namespace fixq::gguf::detail {

// fp32 -> IEEE binary16 bits, round to nearest even; beyond the range -> +-inf; NaN ->
// sign | 0x7E00. This is ggml's software conversion (Maratyszcza's FP16), which agrees
// with F16C's vcvtps2ph (immediate 0) on every non-NaN input, and it is exactly fixq's fp16
// encoder (lowp/element.h, LowpType::Fp16 with Overflow::Default) on all 2^32 inputs, so it
// is that encoder: one fp16 rounding in the library.
static inline uint16_t fp32_to_fp16(float f) {
  return static_cast<uint16_t>(
      lowp_detail::encode_bits<LowpType::Fp16, Overflow::Default>(std::bit_cast<uint32_t>(f)));
}

// IEEE binary16 bits -> fp32, exact. A NaN comes back quiet with its payload, as F16C's
// vcvtph2ps gives it.
static inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  uint32_t bits;
  if (e == 0x1F) {
    bits = sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u);
  } else if (e != 0) {
    bits = sign | ((e + 127 - 15) << 23) | (m << 13);
  } else {
    // m * 2^-24 is exact in float.
    const float v = static_cast<float>(m) * 0x1p-24f;
    bits = sign | std::bit_cast<uint32_t>(v);
  }
  return std::bit_cast<float>(bits);
}

// The element of largest magnitude among x[0..n), the first one on ties, with its sign
// (0 for all zeros); *amax gets its magnitude. ggml's loops ask "ax > amax" strictly.
static inline float signed_absmax(const float* x, int n, float* amax) {
  float max = 0.0f;
  *amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > *amax) {
      *amax = ax;
      max = x[i];
    }
  }
  return max;
}

// ggml's nearest_int: adds 1.5 * 2^23 and reads the low mantissa bits, so |v| <= 2^22
// rounds half to even. Larger or non-finite v give ggml's garbage, computed the same
// defined way (bit operations on the sum, never an out-of-range conversion).
static inline int32_t nearest_int(float v) {
  const float biased = v + 12582912.0f;
  const uint32_t bits = std::bit_cast<uint32_t>(biased);
  return static_cast<int32_t>(bits & 0x007FFFFFu) - 0x00400000;
}

// What x86-64's cvttss2si produces: truncation toward zero when the result fits int32,
// otherwise (NaN, +-inf, |v| >= 2^31) the "integer indefinite" INT32_MIN. gcc converts a
// float to int8_t / uint8_t through this instruction and keeps the low byte; ggml's
// reference quantizers rely on it where their scale overflows (e.g. 1/d = inf).
static inline int32_t x86_truncate(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// C's (int8_t) / (uint8_t) conversion of a float, as gcc on x86-64 computes it.
static inline int8_t x86_float_to_i8(float v) {
  return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(x86_truncate(v)) & 0xFFu));
}
static inline uint8_t x86_float_to_u8(float v) {
  return static_cast<uint8_t>(static_cast<uint32_t>(x86_truncate(v)) & 0xFFu);
}

// The E8M0 scale of an MXFP4 block, halved: 2^(e - 128), exact for every e (2^-128 and
// 2^-127 are subnormal floats). ggml stores E2M1 values doubled (kMxfp4Values), so the
// half makes value * scale = E2M1 value * 2^(e - 127).
static inline float e8m0_half(uint8_t e) {
  if (e < 2) return std::bit_cast<float>(0x00200000u << e);
  return std::bit_cast<float>(static_cast<uint32_t>(e - 1) << 23);
}

// An NVFP4 scale: UE4M3 (unsigned, 4 exponent bits of bias 7, 3 mantissa bits) decoded and
// halved, as ggml's ggml_ue4m3_to_fp32 returns it (the half pairs with the doubled E2M1
// values of kMxfp4Values). Codes 0 and 0x7F (UE4M3's NaN) give 0; bit 7 is ignored
// otherwise, so 0xFF decodes as 240. Every value (m * 2^-10, or (8 + m) * 2^(e - 11)) is exact.
static constexpr float ue4m3_half(uint8_t code) {
  if (code == 0 || code == 0x7F) return 0.0f;
  const int e = (code >> 3) & 0xF, m = code & 7;
  float v = static_cast<float>(e == 0 ? m : 8 + m);
  for (int p = e == 0 ? -10 : e - 11; p < 0; ++p) v *= 0.5f;
  for (int p = e == 0 ? -10 : e - 11; p > 0; --p) v *= 2.0f;
  return v;
}

// ue4m3_half of every code, for kernels that look the scales up.
inline constexpr auto kUe4m3Half = [] {
  std::array<float, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = ue4m3_half(static_cast<uint8_t>(c));
  return t;
}();

// ggml's ggml_fp32_to_ue4m3 (only called with amax / 6, a finite value >= 0): 0 for x <= 0;
// x clamped to 448; below 2^-6 the subnormal code trunc(x * 512 + 0.5) in [0, 7] (so x just
// under 2^-6 saturates to 7, not to the normal 2^-6); otherwise the top three mantissa bits
// rounded half up on the fourth, a carry bumping the exponent; exponents of 15 and up give
// 0x7E (448, what ggml uses as the largest code).
static inline uint8_t fp32_to_ue4m3(float x) {
  if (!(x > 0.0f)) return 0;
  if (x > 448.0f) x = 448.0f;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  int e = static_cast<int>((bits >> 23) & 0xFF) - 127 + 7;
  if (e <= 0) {
    const int m = static_cast<int>(x * 512.0f + 0.5f);  // < 8.5, so the conversion is defined
    return static_cast<uint8_t>(m > 7 ? 7 : m);
  }
  if (e >= 15) return 0x7E;
  int m = static_cast<int>((bits >> 20) & 7) + static_cast<int>((bits >> 19) & 1);
  if (m > 7) {
    m = 0;
    if (++e >= 15) return 0x7E;
  }
  return static_cast<uint8_t>((e << 3) | m);
}

// ggml's ternary code `int xi = lroundf(v) + 1` (TQ1_0, TQ2_0) for v = x * (1 / amax):
// ties away from zero. Where 1 / amax overflows (amax below ~2.9e-39) v is +-inf or NaN;
// glibc's lroundf returns LONG_MIN for those on x86-64, and the long -> int conversion keeps
// the low 32 bits of LONG_MIN + 1, i.e. 1: the zero digit.
static inline int ternary_code(float v) {
  if (!(std::fabs(v) < 0x1p62f)) return 1;
  return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(std::llround(v)) + 1u));
}

// ggml's GROUP_MAX_EPS: a group whose |x| max is below it counts as all zero.
inline constexpr float kGroupMaxEps = 1e-15f;

// ggml's MAX(lo, MIN(hi, v)).
static inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// An integer as float, as C's usual arithmetic conversions do in ggml's float expressions
// (exact below 2^24, which every quant, scale and partial sum here is).
static inline float to_f32(int32_t v) { return static_cast<float>(v); }

// ggml's non-linear 4-bit grid of IQ4_NL (kvalues_iq4nl), ascending.
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};
// E2M1 values doubled, by 4-bit code (kvalues_mxfp4): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

}  // namespace fixq::gguf::detail
