// AVX2 dequantizers of the codebook formats with a scale per sub-block, IQ4_XS
// (kIq4nlValues, a 6-bit scale per 32 under an fp16 super-block scale) and NVFP4 (E2M1
// values, a UE4M3 scale per 16): the 16-entry table is one pshufb, and each output is the
// reference's float(v) * d, bit-identical (bound 0) to dequantize_*_ref.
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"
#include "gguf/unpack_codebook_avx2.h"
#include "gguf/util_avx2.h"

namespace fixq::gguf::detail {

namespace {

// float(v) * d0 for the first 16 of 32 int8 values, float(v) * d1 for the last 16.
void store32_two_scales(float* out, __m256i v, __m256 d0, __m256 d1) {
  store_scaled(out, i8_to_i32<0>(v), d0);
  store_scaled(out + 8, i8_to_i32<1>(v), d0);
  store_scaled(out + 16, i8_to_i32<2>(v), d1);
  store_scaled(out + 24, i8_to_i32<3>(v), d1);
}

}  // namespace

void dequantize_iq4_xs_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockIq4Xs), y += kQK_K) {
    const float d = load_fp16(in + offsetof(BlockIq4Xs, d));
    alignas(32) int32_t ls[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(ls), iq4_xs_scales(in));
    for (int ib = 0; ib < kQK_K / 32; ++ib) {  // qs: 16 bytes per sub-block of 32
      const __m256 dl = _mm256_set1_ps(d * to_f32(ls[ib]));
      const __m256i v = lookup16(kIq4nlValues, nibbles_lo_hi(load16(in + offsetof(BlockIq4Xs, qs) + 16 * ib)));
      store32_two_scales(y + 32 * ib, v, dl, dl);
    }
  }
}

void dequantize_nvfp4_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockNvfp4), y += kQKNvfp4) {
    const auto* d = reinterpret_cast<const uint8_t*>(in + offsetof(BlockNvfp4, d));
    for (int t = 0; t < 2; ++t) {  // sub-blocks 2t and 2t + 1: 16 qs bytes
      const __m256i v = lookup16(kMxfp4Values, nvfp4_codes(in + offsetof(BlockNvfp4, qs) + 16 * t));
      store32_two_scales(y + 32 * t, v, _mm256_set1_ps(kUe4m3Half[d[2 * t]]), _mm256_set1_ps(kUe4m3Half[d[2 * t + 1]]));
    }
  }
}

}  // namespace fixq::gguf::detail
