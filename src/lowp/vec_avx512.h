// Private, AVX-512 translation units only (natively and in the tests' SIMDe build, through
// cpu/x86.h): lowp/element.h's encode and decode on 16 int32 lanes, with mask registers
// where the AVX2 version blends, and the loads and stores that move codes between lanes
// and bytes, masked for a ragged tail (the lanes outside the mask are neither read nor
// written).
#pragma once

#include "cpu/x86.h"

#include <array>
#include <cstdint>

#include "lowp/element.h"

namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512) {

static inline __m512i splat(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }

// The first `remaining` of 16 lanes (all when remaining >= 16).
static inline __mmask16 lanes_mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1u);
}

// Index of the lowest set lane of a mask, or -1.
static inline int64_t first_lane(__mmask16 m) { return m ? __builtin_ctz(static_cast<unsigned>(m)) : -1; }

// round_magnitude on 16 lanes: the AVX2 steps (vec_avx2.h) with masks. Normal results:
// the same integer steps as the scalar definition. Lanes below half the smallest subnormal
// (float32 exponent field < e_zero, zeros included) are 0. Subnormal results:
// |x| * 2^(bias + m - 1) counts subnormal steps exactly (a power of two, and the product
// is a normal float below 2^(m + 1)), rounded to an integer by vrndscaleps with the
// round-to-nearest-even immediate, whatever MXCSR says. bf16 needs no subnormal branch.
template <LowpType T>
static inline __m512i round_magnitude16(__m512i a) {
  constexpr Traits t = traits(T);
  constexpr uint32_t sh = 23 - t.m;
  constexpr uint32_t e_norm = 128 - t.bias;
  constexpr int e_zero = 127 - t.bias - t.m;
  const __m512i e = _mm512_srli_epi32(a, 23);
  __m512i r = _mm512_add_epi32(a, splat((1u << (sh - 1)) - 1));
  r = _mm512_add_epi32(r, _mm512_and_si512(_mm512_srli_epi32(a, sh), splat(1)));
  __m512i mag = _mm512_sub_epi32(_mm512_srli_epi32(r, sh), splat((127u - t.bias) << t.m));
  if constexpr (T != LowpType::Bf16) {
    const __mmask16 tiny = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(e_zero), e);
    mag = _mm512_mask_mov_epi32(mag, tiny, _mm512_setzero_si512());
    const __mmask16 subnormal = static_cast<__mmask16>(_mm512_cmpgt_epi32_mask(splat(e_norm), e) & ~tiny);
    if (subnormal != 0) {
      constexpr float kSteps = static_cast<float>(uint64_t{1} << (t.bias + t.m - 1));
      const __m512 steps = _mm512_mul_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(kSteps));
      const __m512i q =
          _mm512_cvttps_epi32(_mm512_roundscale_ps(steps, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      mag = _mm512_mask_mov_epi32(mag, subnormal, q);
    }
  }
  return mag;
}

// encode_bits on 16 lanes of float32 patterns; the codes come back as int32 lanes.
template <LowpType T, Overflow O>
static inline __m512i encode16(__m512i x) {
  constexpr Traits t = traits(T);
  constexpr bool kDefault = O == Overflow::Default;
  const __m512i zero = _mm512_setzero_si512();
  const __m512i a = _mm512_and_si512(x, splat(0x7FFFFFFFu));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(a, splat(0x7F800000u));
  if constexpr (t.special == Special::E8m0) {
    const __mmask16 nonpositive =
        static_cast<__mmask16>(_mm512_cmpgt_epi32_mask(zero, x) | _mm512_cmpeq_epi32_mask(a, zero));
    __m512i code = _mm512_srli_epi32(_mm512_add_epi32(a, splat(0x400000)), 23);
    const __m512i code_sub = _mm512_maskz_mov_epi32(_mm512_cmpgt_epi32_mask(a, splat(0x5FFFFF)), splat(1));
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(splat(0x800000), a), code_sub);
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(code, splat(t.max_mag)),
                                 splat(kDefault ? kE8m0Nan : t.max_mag));
    code = _mm512_mask_mov_epi32(code, nonpositive, splat(kDefault ? kE8m0Nan : 0));
    return _mm512_mask_mov_epi32(code, nan, splat(kE8m0Nan));
  } else {
    __m512i mag = round_magnitude16<T>(a);
    const __mmask16 over = _mm512_cmpgt_epi32_mask(mag, splat(t.max_mag));
    if constexpr (!kDefault || t.special == Special::FiniteOnly) {
      mag = _mm512_min_epi32(mag, splat(t.max_mag));  // lanes not over are already <= max
    } else if constexpr (t.special == Special::Ieee) {
      mag = _mm512_mask_mov_epi32(mag, over, splat(t.inf_mag));
    } else if constexpr (t.special == Special::NanAllOnes) {
      mag = _mm512_mask_mov_epi32(mag, over, splat(t.nan_mag));
    }
    __m512i sign = _mm512_slli_epi32(_mm512_srli_epi32(x, 31), t.bits - 1);
    if constexpr (t.special == Special::Fnuz) {
      sign = _mm512_mask_mov_epi32(sign, _mm512_cmpeq_epi32_mask(mag, zero), zero);
      __m512i code = _mm512_or_si512(mag, sign);
      if constexpr (kDefault) code = _mm512_mask_mov_epi32(code, over, splat(kFnuzNan));
      return _mm512_mask_mov_epi32(code, nan, splat(kFnuzNan));
    } else if constexpr (t.special == Special::FiniteOnly) {
      return _mm512_mask_mov_epi32(_mm512_or_si512(mag, sign), nan, splat(kNoNanMarker));
    } else {
      return _mm512_mask_mov_epi32(_mm512_or_si512(mag, sign), nan, _mm512_or_si512(sign, splat(t.nan_mag)));
    }
  }
}

// Decoding codes of at most 8 bits by table lookup in registers. Every float32 that such a
// code decodes to has zero low 16 bits (at most 3 mantissa bits; e8m0's 2^-127 is
// 0x00400000; the NaNs are 0x7FC00000 and 0xFFC00000), so each table holds the high 16
// bits, 64 codes per pair of registers, and a vpermt2w whose index sits in the high half
// of each int32 lane (the low half zeroed by the mask) returns the whole float32 pattern.
// Built from decode_bits, so the tables hold the scalar definition; codes beyond the
// type's bits decode to the quiet NaN, as decode_run writes them.
template <LowpType T>
struct DecodeTable {
  alignas(64) uint16_t hi[256];
};

template <LowpType T>
static inline const DecodeTable<T>& decode_table() {
  static const DecodeTable<T> table = [] {
    DecodeTable<T> d{};
    for (uint32_t c = 0; c < 256; ++c)
      d.hi[c] = static_cast<uint16_t>((c < (1u << traits(T).bits) ? decode_bits<T>(c) : kQuietNan) >> 16);
    return d;
  }();
  return table;
}

// The float32 patterns of codes 64 q .. 64 q + 63 of `idx16` (codes << 16) from `table`.
static inline __m512i lookup64(const uint16_t* table, int q, __m512i idx16) {
  const __m512i lo = _mm512_load_si512(static_cast<const void*>(table + 64 * q));
  const __m512i hi = _mm512_load_si512(static_cast<const void*>(table + 64 * q + 32));
  return _mm512_maskz_permutex2var_epi16(static_cast<__mmask32>(0xAAAAAAAAu), lo, idx16, hi);
}

// decode_bits of 16 codes (< 256, int32 lanes) of a type of at most 8 bits; codes beyond
// the type's bits give the quiet NaN.
template <LowpType T>
static inline __m512 decode16(__m512i codes) {
  constexpr int bits = traits(T).bits;
  const uint16_t* table = decode_table<T>().hi;
  const __m512i idx = _mm512_slli_epi32(codes, 16);
  __m512i f;
  if constexpr (bits == 8) {
    const __mmask16 b6 = _mm512_test_epi32_mask(codes, splat(64)), b7 = _mm512_test_epi32_mask(codes, splat(128));
    const __m512i low = _mm512_mask_blend_epi32(b6, lookup64(table, 0, idx), lookup64(table, 1, idx));
    const __m512i high = _mm512_mask_blend_epi32(b6, lookup64(table, 2, idx), lookup64(table, 3, idx));
    f = _mm512_mask_blend_epi32(b7, low, high);
  } else {
    f = lookup64(table, 0, idx);
    f = _mm512_mask_mov_epi32(f, _mm512_cmpgt_epi32_mask(codes, splat((1u << bits) - 1)), splat(kQuietNan));
  }
  return _mm512_castsi512_ps(f);
}

}  // namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512)
