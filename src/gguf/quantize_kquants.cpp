// Reference quantizers of the K-quants Q2_K ... Q6_K and Q8_K: ggml's quantize_row_*_ref.
// Each searches a scale (and min) per sub-block, quantizes those with a super-block scale
// stored as fp16, then requantizes the values with the scales as stored.
//
// ggml stores some integers through narrowing assignments (int -> uint8_t / int8_t); they
// are written here as explicit modular conversions, which C++20 defines identically.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"
#include "gguf/kquant_search.h"

namespace fixq::gguf::detail {

namespace {

// 2-bit codes L[0..255] into qs: byte j/4 + l of each 128-half holds elements l, l + 32,
// l + 64, l + 96 at bits 0, 2, 4, 6.
template <class Code>
void pack_2bit(const Code* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128)
    for (int l = 0; l < 32; ++l)
      qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// The 6-bit scale ls and min lm of sub-block j (0..7) into the 12 bytes of Q4_K / Q5_K.
void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
  if (j < 4) {
    scales[j] = ls;
    scales[j + 4] = lm;
  } else {
    scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
    scales[j - 4] = static_cast<uint8_t>(scales[j - 4] | ((ls >> 4) << 6));
    scales[j] = static_cast<uint8_t>(scales[j] | ((lm >> 4) << 6));
  }
}

// Q4_K and Q5_K share everything but the code width (nmax 15 / 31) and search range.
struct Qkx2Params {
  int nmax;
  float rmin, rdelta;
  int nstep;
};

// Sub-block scales/mins by make_qkx2_quants with weights sqrt(mean x^2) + |x|, then the
// super-block quantization of both; writes d, dmin, scales and returns the codes in L.
template <class Block>
void quantize_k4_scales(const float* x, const Qkx2Params& p, Block* b, uint8_t* L) {
  float scales[8], mins[8], weights[32];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float* xj = x + 32 * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xj[l] * xj[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xj[l]);
    scales[j] = make_qkx2_quants(32, p.nmax, xj, weights, L + 32 * j, &mins[j], p.rmin, p.rdelta, p.nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  for (int j = 0; j < 8; ++j) {
    const auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    const auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    pack_scale_min_k4(j, std::min<uint8_t>(63, ls), std::min<uint8_t>(63, lm), b->scales);
  }
  b->d = fp32_to_fp16(max_scale / 63.0f);
  b->dmin = fp32_to_fp16(max_min / 63.0f);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, b->scales, &sc, &m);
    const float d = fp16_to_fp32(b->d) * static_cast<float>(sc);
    if (d == 0.0f) continue;
    const float dm = fp16_to_fp32(b->dmin) * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii)
      L[32 * j + ii] = static_cast<uint8_t>(clamp_int(nearest_int((x[32 * j + ii] + dm) / d), 0, p.nmax));
  }
}

}  // namespace

void quantize_q2_k_ref(const float* x, int64_t n_blocks, std::byte* out) {
  constexpr float kQ4Scale = 15.0f;
  quantize_blocks<BlockQ2_K, kQK_K>(x, n_blocks, out, [](const float* x, BlockQ2_K& b) {
    uint8_t L[kQK_K];
    float scales[16], mins[16], weights[16];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0.0f) {
      const float iscale = kQ4Scale / max_scale;
      for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      b.d = fp32_to_fp16(max_scale / kQ4Scale);
    } else {
      std::fill(b.scales, b.scales + 16, uint8_t{0});
      b.d = fp32_to_fp16(0.0f);
    }
    if (max_min > 0.0f) {
      const float iscale = kQ4Scale / max_min;
      for (int j = 0; j < 16; ++j) {
        const auto l = static_cast<uint32_t>(nearest_int(iscale * mins[j]));
        b.scales[j] = static_cast<uint8_t>(b.scales[j] | (l << 4));
      }
      b.dmin = fp32_to_fp16(max_min / kQ4Scale);
    } else {
      b.dmin = fp32_to_fp16(0.0f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(b.d) * static_cast<float>(b.scales[j] & 0xF);
      if (d == 0.0f) continue;
      const float dm = fp16_to_fp32(b.dmin) * static_cast<float>(b.scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = static_cast<uint8_t>(clamp_int(nearest_int((x[16 * j + ii] + dm) / d), 0, 3));
    }
    pack_2bit(L, b.qs);
  });
}

namespace {

// The scale search(values, codes) of each of the 16 sub-blocks of 16 (Q3_K, Q6_K), into
// scales and L; the scale of largest magnitude, signed (its magnitude in *amax).
template <class Search>
float sub_block_scales(const float* x, int8_t* L, float* scales, float* amax, Search search) {
  for (int j = 0; j < 16; ++j) scales[j] = search(x + 16 * j, L + 16 * j);
  return signed_absmax(scales, 16, amax);
}

}  // namespace

void quantize_q3_k_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ3_K, kQK_K>(x, n_blocks, out, [](const float* x, BlockQ3_K& b) {
    int8_t L[kQK_K];
    float scales[16], amax;
    const float max_scale =
        sub_block_scales(x, L, scales, &amax, [](const float* v, int8_t* l) { return make_q3_quants_rmse(16, 4, v, l); });
    std::fill(b.scales, b.scales + 12, uint8_t{0});
    if (max_scale != 0.0f) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < 16; ++j) {
        const int l = clamp_int(static_cast<int8_t>(nearest_int(iscale * scales[j])), -32, 31) + 32;
        if (j < 8)
          b.scales[j] = static_cast<uint8_t>(l & 0xF);
        else
          b.scales[j - 8] = static_cast<uint8_t>(b.scales[j - 8] | ((l & 0xF) << 4));
        b.scales[j % 4 + 8] = static_cast<uint8_t>(b.scales[j % 4 + 8] | ((l >> 4) << (2 * (j / 4))));
      }
      b.d = fp32_to_fp16(1.0f / iscale);
    } else {
      b.d = fp32_to_fp16(0.0f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(b.d) * static_cast<float>(q3_k_scale(b.scales, j) - 32);
      if (d == 0.0f) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
    }
    // The third bit of element j goes to bit j / 32 of hmask[j % 32].
    std::fill(b.hmask, b.hmask + 32, uint8_t{0});
    for (int j = 0; j < kQK_K; ++j) {
      if (L[j] > 3) {
        b.hmask[j % 32] = static_cast<uint8_t>(b.hmask[j % 32] | (1u << (j / 32)));
        L[j] = static_cast<int8_t>(L[j] - 4);
      }
    }
    pack_2bit(L, b.qs);
  });
}

void quantize_q4_k_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ4_K, kQK_K>(x, n_blocks, out, [](const float* x, BlockQ4_K& b) {
    uint8_t L[kQK_K];
    quantize_k4_scales(x, Qkx2Params{15, -1.0f, 0.1f, 20}, &b, L);
    // Per 64 elements, 32 bytes: element l in the low nibble, l + 32 in the high one.
    for (int j = 0; j < kQK_K; j += 64)
      for (int l = 0; l < 32; ++l) b.qs[j / 2 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
  });
}

void quantize_q5_k_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ5_K, kQK_K>(x, n_blocks, out, [](const float* x, BlockQ5_K& b) {
    uint8_t L[kQK_K];
    quantize_k4_scales(x, Qkx2Params{31, -0.5f, 0.1f, 15}, &b, L);
    // As Q4_K for the 4 low bits; the fifth of elements n + j and n + j + 32 (n = 64 k)
    // goes to bits 2k and 2k + 1 of qh[j].
    std::fill(b.qh, b.qh + 32, uint8_t{0});
    for (int n = 0, k = 0; n < kQK_K; n += 64, ++k) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[n + j], l2 = L[n + j + 32];
        if (l1 > 15) {
          l1 -= 16;
          b.qh[j] = static_cast<uint8_t>(b.qh[j] | (1u << (2 * k)));
        }
        if (l2 > 15) {
          l2 -= 16;
          b.qh[j] = static_cast<uint8_t>(b.qh[j] | (2u << (2 * k)));
        }
        b.qs[n / 2 + j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
  });
}

void quantize_q6_k_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ6_K, kQK_K>(x, n_blocks, out, [](const float* x, BlockQ6_K& b) {
    int8_t L[kQK_K];
    float scales[16], max_abs_scale;
    const float max_scale = sub_block_scales(x, L, scales, &max_abs_scale,
                                             [](const float* v, int8_t* l) { return make_qx_quants_rmse1(16, 32, v, l); });
    if (max_abs_scale < kGroupMaxEps) {  // an all-zero block
      std::memset(&b, 0, sizeof b);
      return;
    }
    const float iscale = -128.0f / max_scale;
    b.d = fp32_to_fp16(1.0f / iscale);
    for (int ib = 0; ib < 16; ++ib)
      b.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(b.d) * static_cast<float>(b.scales[j]);
      if (d == 0.0f) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
    }
    // Per 128 elements: ql[l] = low nibbles of l and l + 64, ql[l + 32] of l + 32 and
    // l + 96; qh[l] = the two high bits of l, l + 32, l + 64, l + 96.
    for (int j = 0; j < kQK_K; j += 128) {
      uint8_t* ql = b.ql + j / 2;
      uint8_t* qh = b.qh + j / 4;
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  });
}

void quantize_q8_k_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ8_K, kQK_K>(x, n_blocks, out, [](const float* x, BlockQ8_K& b) {
    float amax;
    const float max = signed_absmax(x, kQK_K, &amax);
    if (amax == 0.0f) {
      // ggml leaves bsums unwritten here; fixq writes their value, zero.
      std::memset(&b, 0, sizeof b);
      return;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < kQK_K; ++j) b.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int ii = 0; ii < 16; ++ii) sum += b.qs[16 * j + ii];
      b.bsums[j] = static_cast<int16_t>(sum);
    }
    b.d = 1.0f / iscale;
  });
}

}  // namespace fixq::gguf::detail
