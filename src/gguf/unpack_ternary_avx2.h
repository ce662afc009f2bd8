// Private, for the AVX2 family's ternary kernels (dot_ternary_avx2.cpp,
// dequantize_ternary_avx2.cpp): the digits of TQ1_0 and the codes of TQ2_0, 32 elements at a
// time in element order.
//
// TQ1_0 digit n of a byte b is (q * 3) >> 8 with q = b * 3^n mod 256. AVX2 has no byte
// multiply, so q comes from repeated byte-wise q + 2q; and (q * 3) >> 8 is [q >= 86] +
// [q >= 171] (3q / 256 reaches 1 at q = 85.33, 2 at q = 170.67), two signed byte compares
// once the top bit is flipped. The block's 256 digits come out as eight vectors of 32 in
// element order, so the dot product needs no shuffle of the Q8_K side.
#pragma once

#include "gguf/blocks.h"
#include "gguf/util_avx2.h"

namespace fixq::gguf::detail {

namespace {

// q * 3 mod 256 in every byte.
__m256i times3(__m256i q) { return _mm256_add_epi8(q, _mm256_add_epi8(q, q)); }
__m128i times3(__m128i q) { return _mm_add_epi8(q, _mm_add_epi8(q, q)); }

// (q * 3) >> 8 of every byte q: 0, 1 or 2.
__m256i tq1_digit_of(__m256i q) {
  const __m256i s = _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));  // q - 128, signed
  const __m256i ge86 = _mm256_cmpgt_epi8(s, _mm256_set1_epi8(-43));
  const __m256i ge171 = _mm256_cmpgt_epi8(s, _mm256_set1_epi8(42));
  return _mm256_sub_epi8(_mm256_setzero_si256(), _mm256_add_epi8(ge86, ge171));
}

// Calls f(k, digits) for k = 0..7 with the digits of elements 32k ... 32k + 31 of the TQ1_0
// block at b, in element order (layout in blocks.h).
template <class F>
void tq1_digits(const std::byte* b, F&& f) {
  const std::byte* qs = b + offsetof(BlockTq1_0, qs);
  __m256i q = load32(qs);  // qs[0..31], digit n = elements 32n + m
  for (int n = 0; n < 5; ++n) {
    f(n, tq1_digit_of(q));
    q = times3(q);
  }
  const __m128i r = load16(qs + 32);  // qs[32..47], digit n = elements 160 + 16n + m
  __m256i p = _mm256_set_m128i(times3(r), r);
  f(5, tq1_digit_of(p));  // digits 0, 1: elements 160 ... 191
  p = times3(times3(p));
  f(6, tq1_digit_of(p));  // digits 2, 3: elements 192 ... 223
  p = times3(times3(p));  // low half: digit 4, elements 224 ... 239
  uint32_t w;
  __builtin_memcpy(&w, b + offsetof(BlockTq1_0, qh), sizeof w);  // qh[0..3], digit n = elements 240 + 4n + j
  const __m128i h0 = _mm_set1_epi32(static_cast<int>(w)), h1 = times3(h0), h2 = times3(h1), h3 = times3(h2);
  const __m128i h = _mm_blend_epi32(_mm_blend_epi32(_mm_blend_epi32(h0, h1, 0x2), h2, 0x4), h3, 0x8);
  f(7, tq1_digit_of(_mm256_set_m128i(h, _mm256_castsi256_si128(p))));
}

// Calls f(k, codes) for k = 0..7 with the 2-bit codes of elements 32k ... 32k + 31 of the
// TQ2_0 block at b: byte 32c + m holds element 128c + 32n + m at bits 2n.
template <class F>
void tq2_codes(const std::byte* b, F&& f) {
  for (int c = 0; c < 2; ++c) {  // qs: 32 bytes per 128 elements
    const __m256i q = load32(b + offsetof(BlockTq2_0, qs) + 32 * c);
    // A 16-bit shift by at most 6 leaves the two low bits of each byte from that byte.
    for (int n = 0; n < 4; ++n)
      f(4 * c + n, _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * n)), _mm256_set1_epi8(3)));
  }
}

}  // namespace

}  // namespace fixq::gguf::detail
