// Reference dot products: ggml's generic ggml_vec_dot_<x>_<y>. Integer partial sums are
// exact; the float part is ggml's, in its order:
//   q4_0.q8_0           sumf += (float(sumi) * dx) * dy
//   q8_0.q8_0           sumf += float(sumi) * (dx * dy)
//   q5_0.q8_0           sumf += (dx * dy) * float(sumi)
//   q4_1/q5_1.q8_1      sumf += (dx * dy) * float(sumi) + mx * sy
//   iq4_nl/mxfp4.q8_0   sumf += (dy * dx) * float(sumi)
//   nvfp4.q8_0          per sub-block of 16: sumf += (dy * d_sub) * float(sumi)
//   iq4_xs.q8_K         per sub-block of 32: sumf += ((dx * dy) * float(ls - 32)) * float(sumi)
//   tq1_0.q8_K          sumf += float(sumi) * (dx * dy)
//   tq2_0.q8_K          sumf += float(sumi) * (dy * dx)
//   q2_K.q8_K           sumf += dall * float(isum) - dmin * float(summs)
//   q3_K..q6_K.q8_K     eight int32 lanes (element index mod 8) of scale * q8 * q per
//                       super-block; sums[l] += (dx * dy) * float(lane[l]); Q4_K/Q5_K also
//                       sumf -= (dmin * dy) * float(bsums . mins); at the end sumf += sums[0..7].
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// lane[l] = sum over elements e = l (mod 8) of scales[e / group] * q8[e] * a[e].
void lane_sums(const int8_t* a, const int8_t* q8, const int* scales, int group, int32_t* lane) {
  for (int l = 0; l < 8; ++l) lane[l] = 0;
  for (int e = 0; e < kQK_K; ++e) lane[e % 8] += scales[e / group] * (q8[e] * a[e]);
}

// sums[l] += d * float(lane[l]), then (at the end) the eight lanes into one float.
void add_lanes(float* sums, float d, const int32_t* lane) {
  for (int l = 0; l < 8; ++l) sums[l] += d * to_f32(lane[l]);
}
float finish_lanes(float sumf, const float* sums) {
  for (int l = 0; l < 8; ++l) sumf += sums[l];
  return sumf;
}

// sum over the 16 bsums of bsums[j] * mins[j / 2] (Q4_K / Q5_K).
int bsums_times_mins(const BlockQ8_K& y, const uint8_t* scales) {
  int sum = 0;
  for (int j = 0; j < 16; ++j) {
    uint8_t sc, m;
    scale_min_k4(j / 2, scales, &sc, &m);
    sum += y.bsums[j] * m;
  }
  return sum;
}

// The scales of Q4_K's / Q5_K's eight sub-blocks (their mins are bsums_times_mins').
void k4_scales(const uint8_t* packed, int* scales) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, packed, &sc, &m);
    scales[j] = sc;
  }
}

// Q3_K ... Q6_K: per super-block the codes a[] and their Groups scales (codes(bx, a,
// scales)), the eight lanes added with weight dx * dy; with kMins, ggml's Q4_K / Q5_K term
// sumf -= (dmin * dy) * float(bsums . mins) too.
template <class BX, int Groups, bool kMins, class Codes>
float dot_lanes_q8_k(const std::byte* x, const std::byte* y, int64_t n_blocks, Codes codes) {
  float sums[8] = {};
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BX), y += sizeof(BlockQ8_K)) {
    const auto bx = load_block<BX>(x);
    const auto by = load_block<BlockQ8_K>(y);
    int8_t a[kQK_K];
    int scales[Groups];
    codes(bx, a, scales);
    int32_t lane[8];
    lane_sums(a, by.qs, scales, kQK_K / Groups, lane);
    add_lanes(sums, fp16_to_fp32(bx.d) * by.d, lane);
    if constexpr (kMins) sumf -= fp16_to_fp32(bx.dmin) * by.d * to_f32(bsums_times_mins(by, bx.scales));
  }
  return finish_lanes(sumf, sums);
}

// sum of q8 times the 5-bit codes of a Q5_0 / Q5_1 block minus `offset` (16 or 0).
template <class BX>
int q5_sumi(const BX& bx, const int8_t* q8, int offset) {
  uint32_t qh;
  std::memcpy(&qh, bx.qh, sizeof qh);
  int sumi = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    const int x0 = ((bx.qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1) << 4)) - offset;
    const int x1 = ((bx.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4)) - offset;
    sumi += x0 * q8[j] + x1 * q8[j + kQK / 2];
  }
  return sumi;
}

}  // namespace

float dot_q4_0_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ4_0, BlockQ8_0>(x, y, n_blocks, [](const BlockQ4_0& bx, const BlockQ8_0& by) {
    int sumi = 0;
    for (int j = 0; j < kQK / 2; ++j)
      sumi += ((bx.qs[j] & 0x0F) - 8) * by.qs[j] + ((bx.qs[j] >> 4) - 8) * by.qs[j + kQK / 2];
    return to_f32(sumi) * fp16_to_fp32(bx.d) * fp16_to_fp32(by.d);
  });
}

float dot_q4_1_q8_1_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ4_1, BlockQ8_1>(x, y, n_blocks, [](const BlockQ4_1& bx, const BlockQ8_1& by) {
    int sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) sumi += (bx.qs[j] & 0x0F) * by.qs[j] + (bx.qs[j] >> 4) * by.qs[j + kQK / 2];
    return fp16_to_fp32(bx.d) * fp16_to_fp32(by.d) * to_f32(sumi) + fp16_to_fp32(bx.m) * fp16_to_fp32(by.s);
  });
}

float dot_q5_0_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ5_0, BlockQ8_0>(x, y, n_blocks, [](const BlockQ5_0& bx, const BlockQ8_0& by) {
    return fp16_to_fp32(bx.d) * fp16_to_fp32(by.d) * to_f32(q5_sumi(bx, by.qs, 16));
  });
}

float dot_q5_1_q8_1_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ5_1, BlockQ8_1>(x, y, n_blocks, [](const BlockQ5_1& bx, const BlockQ8_1& by) {
    return fp16_to_fp32(bx.d) * fp16_to_fp32(by.d) * to_f32(q5_sumi(bx, by.qs, 0)) + fp16_to_fp32(bx.m) * fp16_to_fp32(by.s);
  });
}

float dot_q8_0_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ8_0, BlockQ8_0>(x, y, n_blocks, [](const BlockQ8_0& bx, const BlockQ8_0& by) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += bx.qs[j] * by.qs[j];
    return to_f32(sumi) * (fp16_to_fp32(bx.d) * fp16_to_fp32(by.d));
  });
}

namespace {

// IQ4_NL and MXFP4 blocks: 4-bit indices into a 16-value table, q4_0's nibble layout,
// one scale per block (fp16 for IQ4_NL, E8M0 for MXFP4). ggml's evaluation order:
// d_y * d_x * sumi, left to right.
template <class Block, class Scale>
float dot_table_q8_0(const std::byte* x, const std::byte* y, int64_t n_blocks, const int8_t* table, Scale scale) {
  return sum_block_terms<Block, BlockQ8_0>(x, y, n_blocks, [&](const Block& bx, const BlockQ8_0& by) {
    int sumi = 0;
    for (int j = 0; j < kQK / 2; ++j)
      sumi += by.qs[j] * table[bx.qs[j] & 0xF] + by.qs[j + kQK / 2] * table[bx.qs[j] >> 4];
    return fp16_to_fp32(by.d) * scale(bx) * to_f32(sumi);
  });
}

}  // namespace

float dot_iq4_nl_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_table_q8_0<BlockIq4Nl>(x, y, n_blocks, kIq4nlValues, [](const BlockIq4Nl& b) { return fp16_to_fp32(b.d); });
}

float dot_mxfp4_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_table_q8_0<BlockMxfp4>(x, y, n_blocks, kMxfp4Values, [](const BlockMxfp4& b) { return e8m0_half(b.e); });
}

// Each Q8_0 block holds two NVFP4 sub-blocks: 16 q8 values against the 8 low nibbles then
// the 8 high nibbles of the sub-block's bytes.
float dot_nvfp4_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockNvfp4), y += 2 * sizeof(BlockQ8_0)) {
    const auto bx = load_block<BlockNvfp4>(x);
    for (int s = 0; s < kQKNvfp4 / kQKNvfp4Sub; ++s) {
      const auto by = load_block<BlockQ8_0>(y + (s / 2) * sizeof(BlockQ8_0));
      const int8_t* q8 = by.qs + 16 * (s % 2);
      int sumi = 0;
      for (int j = 0; j < 8; ++j)
        sumi += q8[j] * kMxfp4Values[bx.qs[8 * s + j] & 0xF] + q8[j + 8] * kMxfp4Values[bx.qs[8 * s + j] >> 4];
      sumf += fp16_to_fp32(by.d) * ue4m3_half(bx.d[s]) * to_f32(sumi);
    }
  }
  return sumf;
}

float dot_iq4_xs_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockIq4Xs), y += sizeof(BlockQ8_K)) {
    const auto bx = load_block<BlockIq4Xs>(x);
    const auto by = load_block<BlockQ8_K>(y);
    const float d4d8 = fp16_to_fp32(bx.d) * by.d;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const uint8_t* qs = bx.qs + 16 * ib;
      const int8_t* q8 = by.qs + 32 * ib;
      int sumi = 0;
      for (int j = 0; j < 16; ++j) sumi += q8[j] * kIq4nlValues[qs[j] & 0xF] + q8[j + 16] * kIq4nlValues[qs[j] >> 4];
      sumf += d4d8 * to_f32(iq4_xs_scale(bx, ib) - 32) * to_f32(sumi);
    }
  }
  return sumf;
}

float dot_tq1_0_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockTq1_0, BlockQ8_K>(x, y, n_blocks, [](const BlockTq1_0& bx, const BlockQ8_K& by) {
    // The digits in element order (as dequantize_tq1_0_ref lists them).
    int8_t t[kQK_K];
    int e = 0;
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 32; ++m) t[e++] = static_cast<int8_t>(tq1_digit(bx.qs[m], n) - 1);
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 16; ++m) t[e++] = static_cast<int8_t>(tq1_digit(bx.qs[32 + m], n) - 1);
    for (int n = 0; n < 4; ++n)
      for (int j = 0; j < 4; ++j) t[e++] = static_cast<int8_t>(tq1_digit(bx.qh[j], n) - 1);
    int sumi = 0;
    for (int k = 0; k < kQK_K; ++k) sumi += t[k] * by.qs[k];
    return to_f32(sumi) * (fp16_to_fp32(bx.d) * by.d);
  });
}

float dot_tq2_0_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockTq2_0, BlockQ8_K>(x, y, n_blocks, [](const BlockTq2_0& bx, const BlockQ8_K& by) {
    int sumi = 0;
    for (int c = 0; c < 2; ++c)
      for (int n = 0; n < 4; ++n)
        for (int m = 0; m < 32; ++m) sumi += by.qs[128 * c + 32 * n + m] * (((bx.qs[32 * c + m] >> (2 * n)) & 3) - 1);
    return to_f32(sumi) * (by.d * fp16_to_fp32(bx.d));
  });
}

float dot_q2_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return sum_block_terms<BlockQ2_K, BlockQ8_K>(x, y, n_blocks, [](const BlockQ2_K& bx, const BlockQ8_K& by) {
    int summs = 0, isum = 0;
    for (int j = 0; j < 16; ++j) summs += by.bsums[j] * q2_k_min(bx, j);
    for (int j = 0; j < 16; ++j) {  // sub-block j: elements 16 j ... 16 j + 15
      int isuml = 0;
      for (int e = 16 * j; e < 16 * j + 16; ++e)
        isuml += by.qs[e] * ((bx.qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3);
      isum += q2_k_scale(bx, j) * isuml;
    }
    const float dall = by.d * fp16_to_fp32(bx.d), dmin = by.d * fp16_to_fp32(bx.dmin);
    return dall * to_f32(isum) - dmin * to_f32(summs);
  });
}

float dot_q3_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_lanes_q8_k<BlockQ3_K, 16, false>(x, y, n_blocks, [](const BlockQ3_K& bx, int8_t* a, int* scales) {
    for (int e = 0; e < kQK_K; ++e) {
      const int low = (bx.qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
      a[e] = static_cast<int8_t>(low - ((bx.hmask[e % 32] >> (e / 32)) & 1 ? 0 : 4));
    }
    for (int j = 0; j < 16; ++j) scales[j] = q3_k_scale(bx.scales, j) - 32;
  });
}

float dot_q4_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_lanes_q8_k<BlockQ4_K, 8, true>(x, y, n_blocks, [](const BlockQ4_K& bx, int8_t* a, int* scales) {
    for (int e = 0; e < kQK_K; ++e) a[e] = static_cast<int8_t>((bx.qs[32 * (e / 64) + e % 32] >> (4 * ((e / 32) % 2))) & 0xF);
    k4_scales(bx.scales, scales);
  });
}

float dot_q5_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_lanes_q8_k<BlockQ5_K, 8, true>(x, y, n_blocks, [](const BlockQ5_K& bx, int8_t* a, int* scales) {
    for (int e = 0; e < kQK_K; ++e) {
      const int low = (bx.qs[32 * (e / 64) + e % 32] >> (4 * ((e / 32) % 2))) & 0xF;
      a[e] = static_cast<int8_t>(low + ((bx.qh[e % 32] >> (e / 32)) & 1 ? 16 : 0));
    }
    k4_scales(bx.scales, scales);
  });
}

float dot_q6_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_lanes_q8_k<BlockQ6_K, 16, false>(x, y, n_blocks, [](const BlockQ6_K& bx, int8_t* a, int* scales) {
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e / 32) % 4, l = e % 32;
      const int low = (bx.ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0xF;
      const int high = (bx.qh[32 * h + l] >> (2 * k)) & 3;
      a[e] = static_cast<int8_t>((low | (high << 4)) - 32);
    }
    for (int j = 0; j < 16; ++j) scales[j] = bx.scales[j];
  });
}

}  // namespace fixq::gguf::detail
