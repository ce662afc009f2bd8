// AVX2 dequantizers of the ternary formats TQ1_0 and TQ2_0, bit-identical (bound 0) to
// dequantize_*_ref: the digits are unpacked exactly (unpack_ternary_avx2.h) and each output
// is the reference's float(u - 1) * d.
#include "gguf/blocks.h"
#include "gguf/kernels.h"
#include "gguf/unpack_ternary_avx2.h"
#include "gguf/util_avx2.h"

namespace fixq::gguf::detail {

namespace {

// float(u - 1) * d for 32 codes u (element order) into out[0..31].
void store32_ternary(float* out, __m256i u, __m256 d) {
  const __m256i v = _mm256_sub_epi8(u, _mm256_set1_epi8(1));
  store_scaled(out, i8_to_i32<0>(v), d);
  store_scaled(out + 8, i8_to_i32<1>(v), d);
  store_scaled(out + 16, i8_to_i32<2>(v), d);
  store_scaled(out + 24, i8_to_i32<3>(v), d);
}

}  // namespace

void dequantize_tq1_0_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockTq1_0), y += kQK_K) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockTq1_0, d)));
    tq1_digits(in, [&](int k, __m256i u) { store32_ternary(y + 32 * k, u, d); });
  }
}

void dequantize_tq2_0_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockTq2_0), y += kQK_K) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockTq2_0, d)));
    tq2_codes(in, [&](int k, __m256i u) { store32_ternary(y + 32 * k, u, d); });
  }
}

}  // namespace fixq::gguf::detail
