// Reference quantizers of the ternary formats TQ1_0 and TQ2_0 (ggml's quantize_row_tq1_0_ref
// and quantize_row_tq2_0_ref, for BitNet b1.58 and TriLM weights). Both take d = the block's
// |x| max and code every value as round(x / d) + 1 in {0, 1, 2}, ties away from zero; they
// differ only in the packing, so their values (and dot products) are identical.
//
// ggml keeps the packed code in a uint8_t and adds the int digits to it: the arithmetic is
// modulo 256, written out here (it never wraps for digits in {0, 1, 2}).
#include <cmath>

#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// The block scale (|x| max) and its inverse, as ggml forms them (1/d may overflow to inf
// for subnormal blocks; ternary_code turns the resulting inf / NaN products into digit 1).
float block_amax(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < kQK_K; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);  // ggml's MAX
  return amax;
}

// `count` base-3 digits of x[0], x[stride], ... (first most significant), then `extra` zero
// digits, scaled from [0, 243) onto the byte range: ceil(v * 256 / 243).
uint8_t pack_trits(const float* x, int stride, int count, int extra, float id) {
  uint8_t q = 0;
  for (int n = 0; n < count; ++n) q = static_cast<uint8_t>(q * 3 + ternary_code(x[n * stride] * id));
  for (int n = 0; n < extra; ++n) q = static_cast<uint8_t>(q * 3);
  return static_cast<uint8_t>((static_cast<uint16_t>(q) * 256 + 242) / 243);
}

}  // namespace

void quantize_tq1_0_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockTq1_0, kQK_K>(x, n_blocks, out, [](const float* x, BlockTq1_0& b) {
    const float d = block_amax(x);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = fp32_to_fp16(d);
    for (int m = 0; m < 32; ++m) b.qs[m] = pack_trits(x + m, 32, 5, 0, id);             // elements 0..159
    for (int m = 0; m < 16; ++m) b.qs[32 + m] = pack_trits(x + 160 + m, 16, 5, 0, id);  // 160..239
    for (int j = 0; j < 4; ++j) b.qh[j] = pack_trits(x + 240 + j, 4, 4, 1, id);         // 240..255
  });
}

void quantize_tq2_0_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockTq2_0, kQK_K>(x, n_blocks, out, [](const float* x, BlockTq2_0& b) {
    const float d = block_amax(x);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = fp32_to_fp16(d);
    for (int c = 0; c < 2; ++c) {
      for (int m = 0; m < 32; ++m) {
        uint8_t q = 0;
        for (int n = 0; n < 4; ++n)
          q = static_cast<uint8_t>(q + ((ternary_code(x[128 * c + 32 * n + m] * id) & 3) << (2 * n)));
        b.qs[32 * c + m] = q;
      }
    }
  });
}

}  // namespace fixq::gguf::detail
