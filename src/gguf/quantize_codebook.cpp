// Reference quantizers of the non-linear 4-bit grids: IQ4_NL and IQ4_XS (ggml's
// kvalues_iq4nl), MXFP4 and NVFP4 (E2M1 values): quantize_row_iq4_nl_ref,
// quantize_row_iq4_xs_ref (quantize_iq4_xs without an importance matrix),
// quantize_row_mxfp4_ref and quantize_row_nvfp4_ref.
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

// One pass of IQ4_XS's scale search over a sub-block of 32 at inverse scale id: the codes'
// weighted (w = x^2) sums sum(w q x) and sum(w q^2), in ggml's order.
void iq4_sums(const float* x, float id, float* sumqx, float* sumq2) {
  *sumqx = *sumq2 = 0.0f;
  for (int j = 0; j < 32; ++j) {
    const int l = nearest_iq4nl_index(id * x[j]);
    const float q = static_cast<float>(kIq4nlValues[l]), w = x[j] * x[j];
    *sumqx += w * q * x[j];
    *sumq2 += w * q * q;
  }
}

// The scale of one IQ4_XS sub-block (ggml's quantize_row_iq4_nl_impl with ntry = 7 and no
// importance weights): the least-squares scale of the codes found at d = max / 127, then
// of the codes at each id = (itry - 127) / max, itry = -7 ... 7, keeping the best by
// sum(w q x)^2 / sum(w q^2). 0 for a sub-block whose |x| max is below 1e-15.
float iq4_xs_sub_block_scale(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (amax < kGroupMaxEps) return 0.0f;
  const float values0 = static_cast<float>(kIq4nlValues[0]);
  float sumqx, sumq2;
  iq4_sums(x, 1.0f / (-max / values0), &sumqx, &sumq2);
  float d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
  float best = d * sumqx;
  for (int itry = -7; itry <= 7; ++itry) {
    iq4_sums(x, static_cast<float>(itry + kIq4nlValues[0]) / max, &sumqx, &sumq2);
    if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

}  // namespace

void quantize_iq4_nl_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockIq4Nl, kQK>(x, n_blocks, out, [](const float* x, BlockIq4Nl& b) {
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
  });
}

void quantize_mxfp4_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockMxfp4, kQK>(x, n_blocks, out, [](const float* x, BlockMxfp4& b) {
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
  });
}

// The eight sub-block scales are quantized to 6-bit codes l + 32 against the super-block
// scale d = -max_scale / 32 (max_scale: the sub-block scale of largest magnitude), then
// every value is requantized with its sub-block's stored scale d * l. A super-block whose
// sub-blocks are all zero gets d = -0.0 (fp16 0x8000), codes 32 and qs 0x88, as in ggml.
void quantize_iq4_xs_ref(const float* x, int64_t n_blocks, std::byte* out) {
  for (int64_t i = 0; i < n_blocks; ++i, x += kQK_K, out += sizeof(BlockIq4Xs)) {
    BlockIq4Xs b{};
    float scales[kQK_K / 32];
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      scales[ib] = iq4_xs_sub_block_scale(x + 32 * ib);
      if (std::fabs(scales[ib]) > amax_scale) {
        amax_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    const float d = -max_scale / 32.0f;
    b.d = fp32_to_fp16(d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t L[kQK_K];
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const int l = clamp_int(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
      for (int j = 0; j < 32; ++j) L[32 * ib + j] = static_cast<uint8_t>(nearest_iq4nl_index(idl * x[32 * ib + j]));
      const int code = l + 32;
      b.scales_l[ib / 2] = static_cast<uint8_t>(b.scales_l[ib / 2] | ((code & 0xF) << (4 * (ib % 2))));
      b.scales_h = static_cast<uint16_t>(b.scales_h | ((code >> 4) << (2 * ib)));
    }
    for (int k = 0; k < kQK_K / 32; ++k)
      for (int j = 0; j < 16; ++j) b.qs[16 * k + j] = static_cast<uint8_t>(L[32 * k + j] | (L[32 * k + 16 + j] << 4));
    store_block(out, b);
  }
}

// Per sub-block of 16: the UE4M3 scale of amax / 6 (so that E2M1's largest value 6 lands on
// amax), then the nearest E2M1 code at the decoded scale, ties to the smaller magnitude.
// Past the saturated scale (amax / 6 > 448) values clip to +-2688, until |x| is so large
// (around 2^36) that every code's error rounds to the same float: then ggml's search keeps
// code 0.
void quantize_nvfp4_ref(const float* x, int64_t n_blocks, std::byte* out) {
  for (int64_t i = 0; i < n_blocks; ++i, out += sizeof(BlockNvfp4)) {
    BlockNvfp4 b;
    for (int s = 0; s < kQKNvfp4 / kQKNvfp4Sub; ++s, x += kQKNvfp4Sub) {
      float amax = 0.0f;
      for (int j = 0; j < kQKNvfp4Sub; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
      b.d[s] = fp32_to_ue4m3(amax / 6.0f);
      const float d = ue4m3_half(b.d[s]);
      for (int j = 0; j < kQKNvfp4Sub / 2; ++j)
        b.qs[8 * s + j] = static_cast<uint8_t>(nearest_mxfp4_code(x[j], d) | (nearest_mxfp4_code(x[j + 8], d) << 4));
    }
    store_block(out, b);
  }
}

}  // namespace fixq::gguf::detail
