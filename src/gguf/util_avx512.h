// Private: small AVX-512 (F/BW/DQ/VL/VNNI) helpers shared by the gguf *_avx512.cpp kernels.
// Include only from those files (natively with their -m flags, or in the tests' SIMDe build,
// src/cpu/x86.h). Everything is `static inline` for the reason given in ggml_arith.h.
#pragma once

#include "cpu/x86.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"

namespace fixq::gguf::detail {

#define FIXQ_GGUF_INLINE [[gnu::always_inline]] static inline
#define FIXQ_GGUF_INLINE_MEMBER [[gnu::always_inline]] inline

FIXQ_GGUF_INLINE __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
FIXQ_GGUF_INLINE __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
FIXQ_GGUF_INLINE __m512i load64(const void* p) { return _mm512_loadu_si512(p); }

template <class T>
FIXQ_GGUF_INLINE T load_as(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// An fp16 field at p as float, exactly; a NaN comes back quiet (F16C's vcvtph2ps).
FIXQ_GGUF_INLINE float load_fp16(const std::byte* p) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(load_as<uint16_t>(p))));
}

// The low 16 bits of 16 int32 lanes as fp16 values, widened to float exactly.
FIXQ_GGUF_INLINE __m512 fp16_lanes_to_ps(__m512i low16) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(low16)); }

// Bytes p[k * stride .. + 3] for k = 0..15, one int32 lane each (vpgatherdd).
FIXQ_GGUF_INLINE __m512i gather_dwords(const std::byte* p, int stride) {
  const __m512i k = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm512_i32gather_epi32(_mm512_mullo_epi32(k, _mm512_set1_epi32(stride)), p, 1);
}

// [a, a, b, b] in 128-bit lanes: the 16 bytes at a and at b, each twice.
FIXQ_GGUF_INLINE __m512i two_lanes_each(const void* a, const void* b) {
  return _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load16(a)), 0xFF00, load16(b));
}

// [lo(a), hi(a), lo(b), hi(b)]: the low nibbles of the 16 bytes at a, their high nibbles,
// then the same for b: the 64 codes of two blocks in Q4_0's element order.
FIXQ_GGUF_INLINE __m512i nibbles_2x16(const void* a, const void* b) {
  const __m512i z = two_lanes_each(a, b);
  return _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4), _mm512_set1_epi8(0x0F));
}

// A 16-entry byte table looked up by 64 codes (each 0..15), one vpshufb.
FIXQ_GGUF_INLINE __m512i lookup16(const int8_t* table, __m512i codes) {
  return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(load16(table)), codes);
}

// A 4-bit code table's values plus 128 (unsigned, for vpdpbusd: v . y = (v + 128) . y - 128
// * sum(y)), written four times: the first 16 bytes serve vpshufb (lookup16), all 64 serve
// vpermb, which reads the low 6 bits of an index, so a code's bits 4-5 select an identical
// copy and need no mask.
struct CodeTable {
  alignas(64) int8_t b[64];
};
constexpr CodeTable plus128_x4(const int8_t (&values)[16]) {
  CodeTable t{};
  for (int i = 0; i < 64; ++i) t.b[i] = static_cast<int8_t>(static_cast<uint8_t>(values[i % 16] + 128));
  return t;
}
inline constexpr CodeTable kIq4nlPlus128 = plus128_x4(kIq4nlValues);
inline constexpr CodeTable kMxfp4Plus128 = plus128_x4(kMxfp4Values);

// e8m0_half on 16 lanes of E8M0 codes e: 2^(e - 128), a float32 subnormal for e < 2.
FIXQ_GGUF_INLINE __m512 e8m0_half_lanes(__m512i e) {
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(2)), normal, subnormal));
}

// ue4m3_half on 16 lanes of UE4M3 codes (bit 7 ignored; 0 and 0x7F give 0): m * 2^-10 for
// exponent 0, else (8 + m) * 2^(e - 11) = (1 + m / 8) * 2^(e - 8), built from its bits.
FIXQ_GGUF_INLINE __m512 ue4m3_half_lanes(__m512i c) {
  const __m512i e = _mm512_and_si512(_mm512_srli_epi32(c, 3), _mm512_set1_epi32(0xF));
  const __m512i m = _mm512_and_si512(c, _mm512_set1_epi32(7));
  const __m512i normal = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(119)), 23),
                                         _mm512_slli_epi32(m, 20));
  const __m512 subnormal = _mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(0x1p-10f));
  const __m512 v = _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), _mm512_castsi512_ps(normal),
                                        subnormal);
  return _mm512_maskz_mov_ps(_mm512_cmpneq_epi32_mask(c, _mm512_set1_epi32(0x7F)), v);
}

// The per-block sums of eight vectors of two blocks each (v[k]: lanes 0-7 hold block 2k's
// eight partial sums, lanes 8-15 block 2k + 1's): lane j of the result is block j's sum.
// Integer adds in any order: exact.
FIXQ_GGUF_INLINE __m512i sum_lanes_8x2(const __m512i* v) {
  // Fold each block's eight partials to four: 128-bit lanes (a0 a1 b0 b1) of v[2i], v[2i+1]
  // -> r[i] = (a0+a1, b0+b1, c0+c1, d0+d1): four blocks of four partials.
  __m512i r[4];
  for (int i = 0; i < 4; ++i) {
    const __m512i even = _mm512_shuffle_i32x4(v[2 * i], v[2 * i + 1], 0x88);  // lanes 0, 2 | 0, 2
    const __m512i odd = _mm512_shuffle_i32x4(v[2 * i], v[2 * i + 1], 0xDD);   // lanes 1, 3 | 1, 3
    r[i] = _mm512_add_epi32(even, odd);  // 128-bit lane L: block 4i + L
  }
  // Four partials to one, transposing 4 x 4 within each 128-bit lane: lane L of the result
  // holds (r[0], r[1], r[2], r[3]) of blocks (L, 4 + L, 8 + L, 12 + L).
  const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(r[0], r[1]), _mm512_unpackhi_epi32(r[0], r[1]));
  const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(r[2], r[3]), _mm512_unpackhi_epi32(r[2], r[3]));
  const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
  // Element 4L + i is block 4i + L: back to block order.
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), t);
}

// The per-group sums of four vectors of four groups each (v[k]: 128-bit lane L holds group
// 4k + L's four partial sums): lane j of the result is group j's sum.
FIXQ_GGUF_INLINE __m512i sum_lanes_4x4(const __m512i* v) {
  const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
  const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
  const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
  // Element 4L + k is group 4k + L.
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), t);
}

// Sum of the 16 int32 lanes (exact).
FIXQ_GGUF_INLINE int32_t hsum_i32(__m512i v) {
  __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
  return _mm_cvtsi128_si32(t);
}

// The scales ls - 32 of the 8 sub-blocks of two IQ4_XS blocks (iq4_xs_scale, blocks.h),
// lane 8b + i for sub-block i of block b: low 4 bits at 4i of scales_l (read as a u32), high
// 2 bits at 2i of scales_h.
FIXQ_GGUF_INLINE __m512i iq4_xs_scale_lanes(const std::byte* block0, const std::byte* block1) {
  static_assert(sizeof(BlockIq4Xs::scales_l) == 4 && sizeof(BlockIq4Xs::scales_h) == 2);
  const std::byte* sl = block0 + offsetof(BlockIq4Xs, scales_l);
  const std::byte* sh = block0 + offsetof(BlockIq4Xs, scales_h);
  const std::ptrdiff_t next = block1 - block0;
  const __m512i l = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(load_as<int>(sl)),
                                            _mm512_set1_epi32(load_as<int>(sl + next)));
  const __m512i h = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(load_as<uint16_t>(sh)),
                                            _mm512_set1_epi32(load_as<uint16_t>(sh + next)));
  const __m512i low = _mm512_and_si512(
      _mm512_srlv_epi32(l, _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28)), _mm512_set1_epi32(0xF));
  const __m512i high = _mm512_and_si512(
      _mm512_srlv_epi32(h, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14)), _mm512_set1_epi32(3));
  return _mm512_sub_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), _mm512_set1_epi32(32));
}

// The 16 terms of two IQ4_XS blocks (block1 follows block0 by `next` bytes) from their
// sub-block sums sumi (lane 8b + i): (dx_b * dy_b) * float(ls - 32) * float(sumi), in
// dot.cpp's order; dy0, dy1 are the two Q8_K blocks' d.
FIXQ_GGUF_INLINE __m512 iq4_xs_pair_terms(const std::byte* block0, std::ptrdiff_t next, __m512i sumi, float dy0,
                                          float dy1) {
  const __m512i ls = iq4_xs_scale_lanes(block0, block0 + next);
  const std::byte* dx = block0 + offsetof(BlockIq4Xs, d);
  const __m512 d4d8 =
      _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(load_fp16(dx) * dy0), _mm512_set1_ps(load_fp16(dx + next) * dy1));
  return _mm512_mul_ps(_mm512_mul_ps(d4d8, _mm512_cvtepi32_ps(ls)), _mm512_cvtepi32_ps(sumi));
}

// The class permutation of the K-quant dots (see dot_kquants_avx512.cpp), on each 256-bit
// half of v: byte 4d + i of the half takes byte 8i + d, so that dword d holds the four
// elements of the 32 that are congruent to d (mod 8). vpermd gathers the dwords whose bytes
// a 128-bit lane needs, vpshufb orders them.
// Files that define FIXQ_GGUF_VBMI (AVX512_VBMI family) do it in one vpermb.
FIXQ_GGUF_INLINE __m512i class_order(__m512i v, bool same_halves) {
#if defined(FIXQ_GGUF_VBMI)
  // Byte 4d + i of each half takes byte 8i + d of its half (or of the low half).
  alignas(64) static constexpr auto kIndex = [] {
    struct {
      int8_t same[64], own[64];
    } t{};
    for (int b = 0; b < 64; ++b) {
      const int half = b / 32, d = (b % 32) / 4, i = b % 4;
      t.same[b] = static_cast<int8_t>(8 * i + d);
      t.own[b] = static_cast<int8_t>(32 * half + 8 * i + d);
    }
    return t;
  }();
  return _mm512_permutexvar_epi8(_mm512_load_si512(same_halves ? kIndex.same : kIndex.own), v);
#else
  const __m512i dwords = same_halves ? _mm512_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7, 0, 2, 4, 6, 1, 3, 5, 7)
                                     : _mm512_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  const __m512i bytes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dwords, v), bytes);
#endif
}

}  // namespace fixq::gguf::detail
