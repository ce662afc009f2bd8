// AVX2 Q8_K dot products of the ternary formats TQ1_0 and TQ2_0, bit-identical (bound 0)
// to dot_*_ref: the digits are unpacked exactly (unpack_ternary_avx2.h), the integer sums
// are exact, and the float operations are the reference's, on the same operands, in the
// same order.
//
// Exact sums: maddubs(u, y) - maddubs(1, y) with digits u in [0, 3] gives the int16 pair
// sums of (u - 1) * y, |pair| <= 2 * 2 * 128 (u - 1 <= 2), eight of which still fit int16.
#include "gguf/util_avx2.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"
#include "gguf/unpack_ternary_avx2.h"

namespace fixq::gguf::detail {

namespace {

// int16 pair sums of (u - 1) * y for 32 codes u in [0, 3] and any int8 y.
__m256i ternary_pairs(__m256i u, __m256i y) {
  return _mm256_sub_epi16(_mm256_maddubs_epi16(u, y), _mm256_maddubs_epi16(_mm256_set1_epi8(1), y));
}


// sumf += float(sumi) * (dx * dy) per block (ggml's tq2_0 writes dy * dx: the same product),
// the codes of each 32 elements from codes(block, f(k, u)).
template <class Block, class Codes>
float dot_ternary(const std::byte* x, const std::byte* y, int64_t n_blocks, Codes codes) {
  return sum_block_terms<Block, BlockQ8_K>(x, y, n_blocks, [&](const std::byte* x, const std::byte* y) {
    __m256i acc = _mm256_setzero_si256();
    const std::byte* q8 = y + offsetof(BlockQ8_K, qs);
    codes(x, [&](int k, __m256i u) { acc = _mm256_add_epi16(acc, ternary_pairs(u, load32(q8 + 32 * k))); });
    const int32_t sumi = hsum_i32(_mm256_madd_epi16(acc, _mm256_set1_epi16(1)));
    return to_f32(sumi) * (load_fp16(x + offsetof(Block, d)) * load_f32(y + offsetof(BlockQ8_K, d)));
  });
}

}  // namespace

float dot_tq1_0_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_ternary<BlockTq1_0>(x, y, n_blocks, [](const std::byte* b, auto f) { tq1_digits(b, f); });
}

float dot_tq2_0_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_ternary<BlockTq2_0>(x, y, n_blocks, [](const std::byte* b, auto f) { tq2_codes(b, f); });
}

}  // namespace fixq::gguf::detail
