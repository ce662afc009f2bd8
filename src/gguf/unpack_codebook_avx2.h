// Private, for the AVX2 family's kernels of the codebook formats with a scale per
// sub-block (dot_codebook_avx2.cpp, dequantize_codebook_avx2.cpp): the codes of NVFP4 in
// element order and the sub-block scales of IQ4_XS.
#pragma once

#include <cstddef>

#include "gguf/blocks.h"
#include "gguf/util_avx2.h"

namespace fixq::gguf::detail {

namespace {

// The 32 codes of two NVFP4 sub-blocks (16 bytes at q) in element order: per sub-block the
// 8 low nibbles, then the 8 high ones.
__m256i nvfp4_codes(const std::byte* q) {
  const __m128i b = load16(q), m = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(b, m), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  return _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
}

// The 6-bit scale codes ls - 32 of the eight IQ4_XS sub-blocks, lane k for sub-block k.
__m256i iq4_xs_scales(const std::byte* block) {
  uint16_t h;
  uint32_t l;
  __builtin_memcpy(&h, block + offsetof(BlockIq4Xs, scales_h), sizeof h);
  __builtin_memcpy(&l, block + offsetof(BlockIq4Xs, scales_l), sizeof l);
  const __m256i low = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(l)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
      _mm256_set1_epi32(0xF));
  const __m256i high = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
  return _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)), _mm256_set1_epi32(32));
}

}  // namespace

}  // namespace fixq::gguf::detail
