// Private, AVX2 translation units only: lowp/element.h's encode and decode on 8 lanes, and
// the loads and stores that move codes between int32 lanes and packed bytes.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstdint>

#include "lowp/element.h"

namespace fixq::lowp_detail {

static inline __m256i splat(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

// round_magnitude on 8 lanes. Normal results: the same integer steps. Lanes below half the
// smallest subnormal (float32 exponent field < e_zero, zeros included) are 0. Subnormal
// results: |x| * 2^(bias + m - 1) counts subnormal steps; that product is exact (a power
// of two, and the result is a normal float below 2^(m + 1)), and rounding it to an
// integer with the explicit round-to-nearest-even immediate is round_magnitude's rounding,
// whatever the FPU mode. bf16 needs no subnormal branch: it has float32's exponent range,
// so the normal steps round float32 subnormals too.
template <LowpType T>
static inline __m256i round_magnitude8(__m256i a) {
  constexpr Traits t = traits(T);
  constexpr uint32_t sh = 23 - t.m;
  constexpr uint32_t e_norm = 128 - t.bias;
  constexpr int e_zero = 127 - t.bias - t.m;  // 2^(e_zero - 127) is half the smallest subnormal
  const __m256i e = _mm256_srli_epi32(a, 23);
  __m256i r = _mm256_add_epi32(a, splat((1u << (sh - 1)) - 1));
  r = _mm256_add_epi32(r, _mm256_and_si256(_mm256_srli_epi32(a, sh), splat(1)));
  __m256i mag = _mm256_sub_epi32(_mm256_srli_epi32(r, sh), splat((127u - t.bias) << t.m));
  if constexpr (T != LowpType::Bf16) {
    const __m256i tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(e_zero), e);
    mag = _mm256_andnot_si256(tiny, mag);
    const __m256i subnormal = _mm256_andnot_si256(tiny, _mm256_cmpgt_epi32(splat(e_norm), e));
    if (!_mm256_testz_si256(subnormal, subnormal)) {
      constexpr float kSteps = static_cast<float>(uint64_t{1} << (t.bias + t.m - 1));
      const __m256 steps = _mm256_mul_ps(_mm256_castsi256_ps(a), _mm256_set1_ps(kSteps));
      const __m256i q = _mm256_cvttps_epi32(_mm256_round_ps(steps, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      mag = _mm256_blendv_epi8(mag, q, subnormal);
    }
  }
  return mag;
}

// encode_bits on 8 lanes of float32 patterns; the codes come back as int32 lanes.
template <LowpType T, Overflow O>
static inline __m256i encode8(__m256i x) {
  constexpr Traits t = traits(T);
  constexpr bool kDefault = O == Overflow::Default;
  const __m256i a = _mm256_and_si256(x, splat(0x7FFFFFFFu));
  const __m256i nan = _mm256_cmpgt_epi32(a, splat(0x7F800000u));
  if constexpr (t.special == Special::E8m0) {
    const __m256i nonpositive = _mm256_or_si256(_mm256_srai_epi32(x, 31), _mm256_cmpeq_epi32(a, _mm256_setzero_si256()));
    __m256i code = _mm256_srli_epi32(_mm256_add_epi32(a, splat(0x400000)), 23);
    const __m256i code_sub = _mm256_and_si256(_mm256_cmpgt_epi32(a, splat(0x5FFFFF)), splat(1));
    code = _mm256_blendv_epi8(code, code_sub, _mm256_cmpgt_epi32(splat(0x800000), a));
    code = _mm256_blendv_epi8(code, splat(kDefault ? kE8m0Nan : t.max_mag), _mm256_cmpgt_epi32(code, splat(t.max_mag)));
    code = _mm256_blendv_epi8(code, splat(kDefault ? kE8m0Nan : 0), nonpositive);
    return _mm256_blendv_epi8(code, splat(kE8m0Nan), nan);
  } else {
    __m256i mag = round_magnitude8<T>(a);
    const __m256i over = _mm256_cmpgt_epi32(mag, splat(t.max_mag));
    if constexpr (!kDefault || t.special == Special::FiniteOnly) {
      mag = _mm256_min_epi32(mag, splat(t.max_mag));  // lanes not over are already <= max
    } else if constexpr (t.special == Special::Ieee) {
      mag = _mm256_blendv_epi8(mag, splat(t.inf_mag), over);
    } else if constexpr (t.special == Special::NanAllOnes) {
      mag = _mm256_blendv_epi8(mag, splat(t.nan_mag), over);
    }
    __m256i sign = _mm256_slli_epi32(_mm256_srli_epi32(x, 31), t.bits - 1);
    if constexpr (t.special == Special::Fnuz) {
      sign = _mm256_andnot_si256(_mm256_cmpeq_epi32(mag, _mm256_setzero_si256()), sign);
      __m256i code = _mm256_or_si256(mag, sign);
      if constexpr (kDefault) code = _mm256_blendv_epi8(code, splat(kFnuzNan), over);
      return _mm256_blendv_epi8(code, splat(kFnuzNan), nan);
    } else if constexpr (t.special == Special::FiniteOnly) {
      return _mm256_blendv_epi8(_mm256_or_si256(mag, sign), splat(kNoNanMarker), nan);
    } else {
      return _mm256_blendv_epi8(_mm256_or_si256(mag, sign), _mm256_or_si256(sign, splat(t.nan_mag)), nan);
    }
  }
}

// 32 int32 lanes holding bytes -> 32 bytes in lane order. The packs work within 128-bit
// halves, leaving dword d of the result = 4 codes in the order c0[0..3] c1[0..3] c2[0..3]
// c3[0..3] c0[4..7] ...; the permutation restores c0[0..7] c1[0..7] ...
static inline __m256i narrow32x8(__m256i c0, __m256i c1, __m256i c2, __m256i c3) {
  const __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(c0, c1), _mm256_packus_epi32(c2, c3));
  return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// 16 int32 lanes holding uint16 -> 16 uint16 in lane order.
static inline __m256i narrow16x16(__m256i c0, __m256i c1) {
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(c0, c1), 0xD8);
}

static inline __m256i load_u8x8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// The float32 patterns of all 256 byte values (NaN for bytes beyond the type's bits), for
// gathers. Built from decode_bits, so it holds the scalar definition.
template <LowpType T>
static inline const std::array<uint32_t, 256>& decode_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t c = 0; c < 256; ++c) t[c] = c < (1u << traits(T).bits) ? decode_bits<T>(c) : kQuietNan;
    return t;
  }();
  return table;
}

static inline __m256 gather_decode(const std::array<uint32_t, 256>& table, __m256i idx) {
  return _mm256_castsi256_ps(_mm256_i32gather_epi32(reinterpret_cast<const int*>(table.data()), idx, 4));
}

}  // namespace fixq::lowp_detail
