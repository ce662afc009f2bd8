// Private: small AVX2 helpers shared by the gguf *_avx2.cpp kernels. Include only from
// files compiled with -mavx2 -mfma -mf16c; everything is `static inline` for the reason
// given in ggml_arith.h.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "gguf/blocks.h"

namespace fixq::gguf::detail {

static inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
static inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
static inline __m128i load8(const void* p) { return _mm_loadl_epi64(static_cast<const __m128i*>(p)); }

// An fp16 field at p (any alignment) as float, via F16C (exact; NaN quietened like
// fp16_to_fp32).
static inline float load_fp16(const std::byte* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, sizeof h);
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

static inline float load_f32(const std::byte* p) {
  float v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// Byte-wise logical shift right of every byte by n (0..7): a 16-bit shift, then a mask
// that drops the bits that crossed in from the neighbouring byte.
static inline __m256i srli_epi8(__m256i v, int n) {
  return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(n)), _mm256_set1_epi8(static_cast<char>(0xFF >> n)));
}

// Q6_K's unsigned 6-bit codes u = q + 32 of elements 128 h + 32 k + (0..31) of a block
// (BlockQ6_K, blocks.h): the low nibble (k < 2) or high nibble (k >= 2) of
// ql[64 h + 32 (k % 2) + l] and two high bits at 2k of qh[32 h + l]. Their scales are
// sub-blocks 8 h + 2 k and 8 h + 2 k + 1 (one per 128-bit half).
static inline __m256i q6_k_codes(const std::byte* block, int h, int k) {
  const auto* b = reinterpret_cast<const uint8_t*>(block);
  const __m256i qh = load32(b + offsetof(BlockQ6_K, qh) + 32 * h);
  const __m256i ql = load32(b + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (k % 2));
  const __m256i low = k < 2 ? _mm256_and_si256(ql, _mm256_set1_epi8(0x0F)) : srli_epi8(ql, 4);
  const __m256i high = _mm256_slli_epi16(_mm256_and_si256(srli_epi8(qh, 2 * k), _mm256_set1_epi8(3)), 4);
  return _mm256_or_si256(low, high);
}

// The low and high nibbles of 16 bytes as 32 bytes: [lo(b0..b15) | hi(b0..b15)].
static inline __m256i nibbles_lo_hi(__m128i q) {
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
}

// Bit i of the 32-bit word w, for i = 0..31, as byte i of the result: 0xFF if set, else 0.
static inline __m256i bits_to_bytes(uint32_t w) {
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(w)), shuf);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

// The 32 five-bit codes of a Q5 block (nibbles at qs, fifth bits at qh) in element order.
static inline __m256i q5_codes(const std::byte* qs, const std::byte* qh_bytes) {
  uint32_t qh;
  __builtin_memcpy(&qh, qh_bytes, sizeof qh);
  const __m256i high = _mm256_and_si256(bits_to_bytes(qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(nibbles_lo_hi(load16(qs)), high);
}

// A 16-entry int8 table looked up by 32 codes (each byte 0..15).
static inline __m256i lookup16(const int8_t* table, __m256i codes) {
  const __m128i t = load16(table);
  return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), codes);
}

// out[0..7] = float(int32 lanes) * d, i.e. exactly static_cast<float>(q) * d per lane.
static inline void store_scaled(float* out, __m256i q, __m256 d) {
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
}

// out[0..7] = float(q) * d - m (ggml's d * q - m, no contraction).
static inline void store_scaled_minus(float* out, __m256i q, __m256 d, __m256 m) {
  _mm256_storeu_ps(out, _mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(q), d), m));
}

// out[0..7] = float(q) * d + m.
static inline void store_scaled_plus(float* out, __m256i q, __m256 d, __m256 m) {
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(q), d), m));
}

// Sign-extends the 8 int8 at byte offset k * 8 of v (k = 0..3) to int32.
template <int k>
static inline __m256i i8_to_i32(__m256i v) {
  const __m128i half = _mm256_extracti128_si256(v, k / 2);
  return _mm256_cvtepi8_epi32(k % 2 ? _mm_unpackhi_epi64(half, half) : half);
}

// Sum of the eight int32 lanes.
static inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

}  // namespace fixq::gguf::detail
