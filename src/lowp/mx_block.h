// Private: the scalar definition of one OCP MX block (contract in fixq/lowp.h, Part 4),
// shared by every instruction set's kernels.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "fixq/arith.h"
#include "lowp/element.h"
#include "lowp/pack.h"

namespace fixq::lowp_detail {

// The element type of M, and whether it is MXINT8's integer (then `element` is unused).
template <MxType M>
struct MxTraits {
  static constexpr bool is_int = M == MxType::Int8;
  static constexpr LowpType element = M == MxType::Fp8E4m3   ? LowpType::E4m3fn
                                      : M == MxType::Fp8E5m2 ? LowpType::E5m2
                                      : M == MxType::Fp6E2m3 ? LowpType::E2m3fn
                                      : M == MxType::Fp6E3m2 ? LowpType::E3m2fn
                                                             : LowpType::E2m1fn;
  static constexpr int bits = is_int ? 8 : traits(element).bits;
  // Exponent of the largest normal: (2^e - 1 - bias) for float6/4 (every exponent is
  // finite), one less for e5m2 (the top exponent is inf/NaN); e4m3fn keeps its top
  // exponent (only its all-ones mantissa is NaN); MXINT8's 1.111111b has exponent 0.
  static constexpr int emax = is_int ? 0
                              : traits(element).special == Special::Ieee
                                  ? (1 << traits(element).e) - 2 - traits(element).bias
                                  : (1 << traits(element).e) - 1 - traits(element).bias;
  static constexpr int64_t block_bytes = 1 + kMxBlockSize * bits / 8;
};

inline constexpr uint8_t kMxNanScale = 0xFF;

// clamp(floor(log2(amax)) - emax, -127, 127) from amax's float32 pattern: floor(log2) of a
// normal float is its unbiased exponent; zero and subnormals (exponent field 0) lie below
// 2^-126, so they clamp to -127 like everything else that small.
static inline int mx_exponent(uint32_t amax_bits, int emax) {
  return std::clamp(static_cast<int>(amax_bits >> 23) - 127 - emax, -127, 127);
}

// 2^k as a float32, exactly, for k in [-127, 127] (2^-127 is subnormal).
static inline float pow2f(int k) {
  return std::bit_cast<float>(k >= -126 ? static_cast<uint32_t>(k + 127) << 23 : 0x00400000u);
}

// MXINT8's element: round_half_even(t * 64) clamped to +-127 (+-max normal 127/64, like the
// float elements; -128 would make requantizing a dequantized block change it). t * 64 is exact.
static inline uint8_t mx_int8_code(float t) {
  const int64_t q = round_half_even_saturate(static_cast<double>(t * 64.0f), -127, 127);
  return static_cast<uint8_t>(static_cast<int8_t>(q));
}

template <MxType M>
static inline void mx_quantize_block(const float* v, uint8_t* out) {
  using Tr = MxTraits<M>;
  uint32_t amax = 0;
  for (int64_t i = 0; i < kMxBlockSize; ++i) amax = std::max(amax, std::bit_cast<uint32_t>(v[i]) & 0x7FFFFFFFu);
  if (amax >= 0x7F800000u) {  // NaN or infinity: the NaN block
    out[0] = kMxNanScale;
    std::memset(out + 1, 0, Tr::block_bytes - 1);
    return;
  }
  const int s = mx_exponent(amax, Tr::emax);
  out[0] = static_cast<uint8_t>(s + 127);
  // v * 2^-s is exact unless the product is a float32 subnormal, i.e. below 2^-126: far
  // under half the smallest element value of every type, so the code is 0 either way.
  const float factor = pow2f(-s);
  uint8_t codes[kMxBlockSize];
  for (int64_t i = 0; i < kMxBlockSize; ++i) {
    const float t = v[i] * factor;
    if constexpr (Tr::is_int) {
      codes[i] = mx_int8_code(t);
    } else {
      codes[i] = static_cast<uint8_t>(encode_bits<Tr::element, Overflow::Saturate>(std::bit_cast<uint32_t>(t)));
    }
  }
  pack_bits(Tr::bits, codes, kMxBlockSize, out + 1);
}

template <MxType M>
static inline void mx_dequantize_block(const uint8_t* in, float* v) {
  using Tr = MxTraits<M>;
  if (in[0] == kMxNanScale) {
    std::fill(v, v + kMxBlockSize, std::bit_cast<float>(kQuietNan));
    return;
  }
  const float scale = pow2f(static_cast<int>(in[0]) - 127);
  uint8_t codes[kMxBlockSize];
  unpack_bits(Tr::bits, in + 1, kMxBlockSize, codes);
  for (int64_t i = 0; i < kMxBlockSize; ++i) {
    if constexpr (Tr::is_int) {
      v[i] = static_cast<float>(static_cast<int8_t>(codes[i])) * 0.015625f * scale;
    } else {
      v[i] = std::bit_cast<float>(decode_bits<Tr::element>(codes[i])) * scale;
    }
  }
}

}  // namespace fixq::lowp_detail
