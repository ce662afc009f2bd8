// Reference quantizers of the non-linear 4-bit grids IQ4_NL and MXFP4 (ggml's
// quantize_row_iq4_nl_ref and quantize_row_mxfp4_ref).
#include <algorithm>
#include <cmath>

#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// ggml's best_index_int8 over the ascending IQ4_NL grid: the nearest entry, the upper
// one on a tie between neighbours; everything below / above the grid clamps.
int nearest_iq4nl_index(float x) {
  const int8_t* val = kIq4nlValues;
  if (x <= val[0]) return 0;
  if (x >= val[15]) return 15;
  int ml = 0, mu = 15;
  while (mu - ml > 1) {
    const int mav = (ml + mu) / 2;
    if (x < val[mav])
      mu = mav;
    else
      ml = mav;
  }
  return x - static_cast<float>(val[mu - 1]) < static_cast<float>(val[mu]) - x ? mu - 1 : mu;
}

// The first MXFP4 code whose value * d is nearest x (so ties go to the smaller magnitude,
// and 0 is code 0, never 8).
uint8_t nearest_mxfp4_code(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kMxfp4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best);
}

}  // namespace

void quantize_iq4_nl_ref(const float* x, int64_t n_blocks, std::byte* out) {
  for (int64_t i = 0; i < n_blocks; ++i, x += kQK, out += sizeof(BlockIq4Nl)) {
    BlockIq4Nl b;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    uint8_t L[kQK];
    float d = 0.0f;
    if (amax < kGroupMaxEps) {
      // ggml packs uninitialised codes here; index 8 is what x = 0 maps to.
      std::fill(L, L + kQK, uint8_t{8});
    } else {
      // One pass at d = max / -127 (the grid's largest magnitude), then the weighted
      // (w = x^2) least-squares scale for the codes found; ggml's reference (ntry = -1)
      // tries no other scale.
      d = max / static_cast<float>(kIq4nlValues[0]);
      const float id = 1.0f / d;
      float sumqx = 0.0f, sumq2 = 0.0f;
      for (int j = 0; j < kQK; ++j) {
        const int l = nearest_iq4nl_index(id * x[j]);
        L[j] = static_cast<uint8_t>(l);
        const float q = static_cast<float>(kIq4nlValues[l]), w = x[j] * x[j];
        sumqx += w * q * x[j];
        sumq2 += w * q * q;
      }
      d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    }
    b.d = fp32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) b.qs[j] = static_cast<uint8_t>(L[j] | (L[j + kQK / 2] << 4));
    store_block(out, b);
  }
}

void quantize_mxfp4_ref(const float* x, int64_t n_blocks, std::byte* out) {
  for (int64_t i = 0; i < n_blocks; ++i, x += kQK, out += sizeof(BlockMxfp4)) {
    BlockMxfp4 b;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j)
      if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
    // e = floor(log2(amax)) - 2 + 127, so that amax / 2^(e - 127) lies in [4, 8): the
    // largest E2M1 value 6 sits inside. log2f is glibc's, as in ggml; the uint8_t
    // conversion is gcc's x86-64 one (amax < 2^-125 wraps, as it does in ggml).
    b.e = amax > 0.0f ? x86_float_to_u8(std::floor(std::log2(amax)) - 2.0f + 127.0f) : uint8_t{0};
    const float d = e8m0_half(b.e);
    for (int j = 0; j < kQK / 2; ++j)
      b.qs[j] = static_cast<uint8_t>(nearest_mxfp4_code(x[j], d) | (nearest_mxfp4_code(x[j + kQK / 2], d) << 4));
    store_block(out, b);
  }
}

}  // namespace fixq::gguf::detail
