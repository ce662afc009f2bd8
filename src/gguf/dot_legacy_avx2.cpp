// AVX2 dot products of the 32-element formats with Q8_0 / Q8_1. The integer sum of each
// block is exact whatever the order; the float part is the reference's scalar code, block
// after block, so the result is bit-identical (bound 0) to dot_*_ref.
//
// Exact integer sums: maddubs multiplies unsigned by signed bytes and adds pairs with
// int16 saturation, so it is used only where a pair cannot saturate: for codes u in
// [0, 31] (|pair| <= 2 * 31 * 128), and for signed values v = u - off written as
// maddubs(u, y) - maddubs(off, y) (|pair| <= 2 * 16 * 128). Full-range int8 x int8 (Q8_0,
// IQ4_NL) widens to int16 and uses madd, exact for every byte, -128 included.
#include "gguf/util_avx2.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

int32_t pairs_to_i32(__m256i pairs16) { return hsum_i32(_mm256_madd_epi16(pairs16, _mm256_set1_epi16(1))); }

// sum of u[i] * y[i] for 32 codes u in [0, 31].
int32_t dot_u(__m256i u, __m256i y) { return pairs_to_i32(_mm256_maddubs_epi16(u, y)); }

// sum of (u[i] - off) * y[i] for codes u in [0, 31] and off <= 16.
int32_t dot_u_offset(__m256i u, __m256i y, int off) {
  const __m256i o = _mm256_set1_epi8(static_cast<char>(off));
  return pairs_to_i32(_mm256_sub_epi16(_mm256_maddubs_epi16(u, y), _mm256_maddubs_epi16(o, y)));
}

// sum of x[i] * y[i] for any 32 int8 pairs.
int32_t dot_i8(__m256i x, __m256i y) {
  const __m256i lo = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(x)),
                                       _mm256_cvtepi8_epi16(_mm256_castsi256_si128(y)));
  const __m256i hi = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1)),
                                       _mm256_cvtepi8_epi16(_mm256_extracti128_si256(y, 1)));
  return hsum_i32(_mm256_add_epi32(lo, hi));
}

// kMxfp4Values + 12: the doubled E2M1 values as codes in [0, 24].
constexpr int8_t kMxfp4Plus12[16] = {12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0};

}  // namespace

float dot_q4_0_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ4_0, BlockQ8_0>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const int32_t sumi =
        dot_u_offset(nibbles_lo_hi(load16(x + offsetof(BlockQ4_0, qs))), load32(y + offsetof(BlockQ8_0, qs)), 8);
    return to_f32(sumi) * load_fp16(x + offsetof(BlockQ4_0, d)) * load_fp16(y + offsetof(BlockQ8_0, d));
  });
}

float dot_q4_1_q8_1_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ4_1, BlockQ8_1>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const int32_t sumi = dot_u(nibbles_lo_hi(load16(x + offsetof(BlockQ4_1, qs))), load32(y + offsetof(BlockQ8_1, qs)));
    return load_fp16(x + offsetof(BlockQ4_1, d)) * load_fp16(y + offsetof(BlockQ8_1, d)) * to_f32(sumi) +
           load_fp16(x + offsetof(BlockQ4_1, m)) * load_fp16(y + offsetof(BlockQ8_1, s));
  });
}

float dot_q5_0_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ5_0, BlockQ8_0>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const __m256i u = q5_codes(x + offsetof(BlockQ5_0, qs), x + offsetof(BlockQ5_0, qh));
    const int32_t sumi = dot_u_offset(u, load32(y + offsetof(BlockQ8_0, qs)), 16);
    return load_fp16(x + offsetof(BlockQ5_0, d)) * load_fp16(y + offsetof(BlockQ8_0, d)) * to_f32(sumi);
  });
}

float dot_q5_1_q8_1_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ5_1, BlockQ8_1>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const __m256i u = q5_codes(x + offsetof(BlockQ5_1, qs), x + offsetof(BlockQ5_1, qh));
    const int32_t sumi = dot_u(u, load32(y + offsetof(BlockQ8_1, qs)));
    return load_fp16(x + offsetof(BlockQ5_1, d)) * load_fp16(y + offsetof(BlockQ8_1, d)) * to_f32(sumi) +
           load_fp16(x + offsetof(BlockQ5_1, m)) * load_fp16(y + offsetof(BlockQ8_1, s));
  });
}

float dot_q8_0_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ8_0, BlockQ8_0>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const int32_t sumi = dot_i8(load32(x + offsetof(BlockQ8_0, qs)), load32(y + offsetof(BlockQ8_0, qs)));
    return to_f32(sumi) * (load_fp16(x + offsetof(BlockQ8_0, d)) * load_fp16(y + offsetof(BlockQ8_0, d)));
  });
}

float dot_iq4_nl_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockIq4Nl, BlockQ8_0>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const __m256i v = lookup16(kIq4nlValues, nibbles_lo_hi(load16(x + offsetof(BlockIq4Nl, qs))));
    const int32_t sumi = dot_i8(v, load32(y + offsetof(BlockQ8_0, qs)));
    return load_fp16(y + offsetof(BlockQ8_0, d)) * load_fp16(x + offsetof(BlockIq4Nl, d)) * to_f32(sumi);
  });
}

float dot_mxfp4_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockMxfp4, BlockQ8_0>(x, y, n_blocks, [](const std::byte* x, const std::byte* y) {
    const __m256i u = lookup16(kMxfp4Plus12, nibbles_lo_hi(load16(x + offsetof(BlockMxfp4, qs))));
    const int32_t sumi = dot_u_offset(u, load32(y + offsetof(BlockQ8_0, qs)), 12);
    return load_fp16(y + offsetof(BlockQ8_0, d)) * e8m0_half(static_cast<uint8_t>(x[offsetof(BlockMxfp4, e)])) *
             to_f32(sumi);
  });
}

}  // namespace fixq::gguf::detail
