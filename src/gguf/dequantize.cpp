// Reference dequantizers of every format: ggml's dequantize_row_*, with its float
// association (e.g. Q6_K is (d * sc) * q, Q4_K is (d * sc) * q - dmin * m, IQ4_XS is
// (d * (ls - 32)) * value).
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// The fifth bits of elements j and j + 16 of a Q5 block, as 0 or 16.
int q5_high(uint32_t qh, int j) { return static_cast<int>(((qh >> j) << 4) & 0x10); }

}  // namespace

void dequantize_q4_0_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ4_0, kQK>(in, n_blocks, y, [](const BlockQ4_0& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = to_f32((b.qs[j] & 0x0F) - 8) * d;
      y[j + kQK / 2] = to_f32((b.qs[j] >> 4) - 8) * d;
    }
  });
}

void dequantize_q4_1_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ4_1, kQK>(in, n_blocks, y, [](const BlockQ4_1& b, float* y) {
    const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = to_f32(b.qs[j] & 0x0F) * d + m;
      y[j + kQK / 2] = to_f32(b.qs[j] >> 4) * d + m;
    }
  });
}

void dequantize_q5_0_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ5_0, kQK>(in, n_blocks, y, [](const BlockQ5_0& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    uint32_t qh;
    std::memcpy(&qh, b.qh, sizeof qh);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = to_f32(((b.qs[j] & 0x0F) | q5_high(qh, j)) - 16) * d;
      y[j + kQK / 2] = to_f32(((b.qs[j] >> 4) | q5_high(qh, j + 16)) - 16) * d;
    }
  });
}

void dequantize_q5_1_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ5_1, kQK>(in, n_blocks, y, [](const BlockQ5_1& b, float* y) {
    const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
    uint32_t qh;
    std::memcpy(&qh, b.qh, sizeof qh);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = to_f32((b.qs[j] & 0x0F) | q5_high(qh, j)) * d + m;
      y[j + kQK / 2] = to_f32((b.qs[j] >> 4) | q5_high(qh, j + 16)) * d + m;
    }
  });
}

void dequantize_q8_0_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ8_0, kQK>(in, n_blocks, y, [](const BlockQ8_0& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    for (int j = 0; j < kQK; ++j) y[j] = to_f32(b.qs[j]) * d;
  });
}

void dequantize_q8_1_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ8_1, kQK>(in, n_blocks, y, [](const BlockQ8_1& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    for (int j = 0; j < kQK; ++j) y[j] = to_f32(b.qs[j]) * d;
  });
}

// Element e = 128 h + 32 j + l (l < 32) has scale/min byte e / 16 and its code at bits
// 2j of qs[32 h + l].
void dequantize_q2_k_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ2_K, kQK_K>(in, n_blocks, y, [](const BlockQ2_K& b, float* y) {
    const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int q = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
      y[e] = d * to_f32(q2_k_scale(b, e / 16)) * to_f32(q) - dmin * to_f32(q2_k_min(b, e / 16));
    }
  });
}

// Element e = 128 h + 32 j + l: 2 low bits at bits 2j of qs[32 h + l], third bit at bit
// 4h + j of hmask[l] (clear means -4), scale q3_k_scale(e / 16) - 32.
void dequantize_q3_k_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ3_K, kQK_K>(in, n_blocks, y, [](const BlockQ3_K& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    for (int e = 0; e < kQK_K; ++e) {
      const int low = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
      const int q = low - ((b.hmask[e % 32] >> (e / 32)) & 1 ? 0 : 4);
      y[e] = d * to_f32(q3_k_scale(b.scales, e / 16) - 32) * to_f32(q);
    }
  });
}

namespace {

// Q4_K and Q5_K: per sub-block j of 32, y = (d * sc_j) * code - dmin * m_j with code(b, j, l)
// the element's 4- or 5-bit code.
template <class Block, class Code>
void dequantize_k4(const std::byte* in, int64_t n_blocks, float* y, Code code) {
  dequantize_blocks<Block, kQK_K>(in, n_blocks, y, [&](const Block& b, float* y) {
    const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      scale_min_k4(j, b.scales, &sc, &m);
      const float dl = d * to_f32(sc), ml = dmin * to_f32(m);
      for (int l = 0; l < 32; ++l) y[32 * j + l] = dl * to_f32(code(b, j, l)) - ml;
    }
  });
}

// The low nibble code of element 32 j + l of a Q4_K or Q5_K block.
template <class Block>
int k4_nibble(const Block& b, int j, int l) {
  return (b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
}

}  // namespace

void dequantize_q4_k_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_k4<BlockQ4_K>(in, n_blocks, y, [](const BlockQ4_K& b, int j, int l) { return k4_nibble(b, j, l); });
}

void dequantize_q5_k_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_k4<BlockQ5_K>(in, n_blocks, y, [](const BlockQ5_K& b, int j, int l) {
    return k4_nibble(b, j, l) + ((b.qh[l] >> j) & 1 ? 16 : 0);
  });
}

// Element e = 128 h + 32 k + l: low nibble of ql[64 h + l + 32 (k % 2)] (k < 2) or its
// high nibble (k >= 2), high bits at 2k of qh[32 h + l], scale sc[e / 16].
void dequantize_q6_k_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ6_K, kQK_K>(in, n_blocks, y, [](const BlockQ6_K& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e / 32) % 4, l = e % 32;
      const int low = (b.ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0xF;
      const int high = (b.qh[32 * h + l] >> (2 * k)) & 3;
      y[e] = d * to_f32(b.scales[e / 16]) * to_f32((low | (high << 4)) - 32);
    }
  });
}

void dequantize_q8_k_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockQ8_K, kQK_K>(in, n_blocks, y, [](const BlockQ8_K& b, float* y) {
    for (int j = 0; j < kQK_K; ++j) y[j] = b.d * to_f32(b.qs[j]);
  });
}

void dequantize_iq4_nl_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockIq4Nl, kQK>(in, n_blocks, y, [](const BlockIq4Nl& b, float* y) {
    const float d = fp16_to_fp32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * to_f32(kIq4nlValues[b.qs[j] & 0xF]);
      y[j + kQK / 2] = d * to_f32(kIq4nlValues[b.qs[j] >> 4]);
    }
  });
}

void dequantize_mxfp4_ref(const std::byte* in, int64_t n_blocks, float* y) {
  dequantize_blocks<BlockMxfp4, kQK>(in, n_blocks, y, [](const BlockMxfp4& b, float* y) {
    const float d = e8m0_half(b.e);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = to_f32(kMxfp4Values[b.qs[j] & 0xF]) * d;
      y[j + kQK / 2] = to_f32(kMxfp4Values[b.qs[j] >> 4]) * d;
    }
  });
}

void dequantize_iq4_xs_ref(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockIq4Xs)) {
    const auto b = load_block<BlockIq4Xs>(in);
    const float d = fp16_to_fp32(b.d);
    for (int ib = 0; ib < kQK_K / 32; ++ib, y += 32) {
      const int ls = iq4_xs_scale(b, ib);
      const float dl = d * to_f32(ls - 32);
      const uint8_t* qs = b.qs + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * to_f32(kIq4nlValues[qs[j] & 0xF]);
        y[j + 16] = dl * to_f32(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

// Element order: qs[0..31] digits 0..4 (elements 32n + m), qs[32..47] digits 0..4 (160 +
// 16n + m), qh digits 0..3 (240 + 4n + j); every byte holds valid digits.
void dequantize_tq1_0_ref(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockTq1_0)) {
    const auto b = load_block<BlockTq1_0>(in);
    const float d = fp16_to_fp32(b.d);
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 32; ++m) *y++ = to_f32(tq1_digit(b.qs[m], n) - 1) * d;
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 16; ++m) *y++ = to_f32(tq1_digit(b.qs[32 + m], n) - 1) * d;
    for (int n = 0; n < 4; ++n)
      for (int j = 0; j < 4; ++j) *y++ = to_f32(tq1_digit(b.qh[j], n) - 1) * d;
  }
}

// Code 3 (never written by the quantizer) reads as value 2 * d, as in ggml.
void dequantize_tq2_0_ref(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockTq2_0)) {
    const auto b = load_block<BlockTq2_0>(in);
    const float d = fp16_to_fp32(b.d);
    for (int c = 0; c < 2; ++c)
      for (int n = 0; n < 4; ++n)
        for (int m = 0; m < 32; ++m) *y++ = to_f32(((b.qs[32 * c + m] >> (2 * n)) & 3) - 1) * d;
  }
}

void dequantize_nvfp4_ref(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockNvfp4)) {
    const auto b = load_block<BlockNvfp4>(in);
    for (int s = 0; s < kQKNvfp4 / kQKNvfp4Sub; ++s, y += kQKNvfp4Sub) {
      const float d = ue4m3_half(b.d[s]);
      for (int j = 0; j < 8; ++j) {
        y[j] = to_f32(kMxfp4Values[b.qs[8 * s + j] & 0xF]) * d;
        y[j + 8] = to_f32(kMxfp4Values[b.qs[8 * s + j] >> 4]) * d;
      }
    }
  }
}

}  // namespace fixq::gguf::detail
