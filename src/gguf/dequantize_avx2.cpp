// AVX2 dequantizers of every format. Each output is the same single IEEE operation (or
// the same two, in the same order) as the reference computes for that element, on the
// same operands, so the results are bit-identical: float(q) * d, float(q) * d + m,
// (d * sc) * float(q) - dmin * m ... with the integer q unpacked exactly.
#include "gguf/util_avx2.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// Bytes 8k .. 8k + 7 of a 16-byte block broadcast to both halves of q, zero-extended into
// the eight int32 lanes (one in-lane shuffle, no cross-lane work).
template <int k>
__m256i bytes_to_lanes(__m256i q) {
  constexpr char z = static_cast<char>(0x80);  // pshufb: zero this byte
  const __m256i order = _mm256_setr_epi8(8 * k, z, z, z, 8 * k + 1, z, z, z, 8 * k + 2, z, z, z, 8 * k + 3, z, z, z,
                                         8 * k + 4, z, z, z, 8 * k + 5, z, z, z, 8 * k + 6, z, z, z, 8 * k + 7, z, z, z);
  return _mm256_shuffle_epi8(q, order);
}

// 32 int8 codes (element order) times d into out[0..31].
void store32_scaled(float* out, __m256i q, __m256 d) {
  store_scaled(out, i8_to_i32<0>(q), d);
  store_scaled(out + 8, i8_to_i32<1>(q), d);
  store_scaled(out + 16, i8_to_i32<2>(q), d);
  store_scaled(out + 24, i8_to_i32<3>(q), d);
}

// Two sub-blocks of 16 codes (element order): d0 * q - m0 for the first, d1 * q - m1 for
// the second.
void store16x2_scaled_minus(float* out, __m256i q, __m256 d0, __m256 m0, __m256 d1, __m256 m1) {
  store_scaled_minus(out, i8_to_i32<0>(q), d0, m0);
  store_scaled_minus(out + 8, i8_to_i32<1>(q), d0, m0);
  store_scaled_minus(out + 16, i8_to_i32<2>(q), d1, m1);
  store_scaled_minus(out + 24, i8_to_i32<3>(q), d1, m1);
}

// Two sub-blocks of 16 codes: (dl0 * q) for the first, (dl1 * q) for the second.
void store16x2_scaled(float* out, __m256i q, __m256 d0, __m256 d1) {
  store_scaled(out, i8_to_i32<0>(q), d0);
  store_scaled(out + 8, i8_to_i32<1>(q), d0);
  store_scaled(out + 16, i8_to_i32<2>(q), d1);
  store_scaled(out + 24, i8_to_i32<3>(q), d1);
}

// 32 codes times d plus m.
void store32_scaled_plus(float* out, __m256i q, __m256 d, __m256 m) {
  store_scaled_plus(out, i8_to_i32<0>(q), d, m);
  store_scaled_plus(out + 8, i8_to_i32<1>(q), d, m);
  store_scaled_plus(out + 16, i8_to_i32<2>(q), d, m);
  store_scaled_plus(out + 24, i8_to_i32<3>(q), d, m);
}

void store32_scaled_minus(float* out, __m256i q, __m256 d, __m256 m) {
  store_scaled_minus(out, i8_to_i32<0>(q), d, m);
  store_scaled_minus(out + 8, i8_to_i32<1>(q), d, m);
  store_scaled_minus(out + 16, i8_to_i32<2>(q), d, m);
  store_scaled_minus(out + 24, i8_to_i32<3>(q), d, m);
}

// 32 int8 at p, sign-extended straight from memory (vpmovsxbd m64: no extract or unpack
// shuffles, which bound these kernels otherwise), times d (or d0 for the first 16 and d1
// for the last 16).
void store32_scaled_from(float* out, const void* p, float d0, float d1) {
  const auto* b = static_cast<const uint8_t*>(p);
  const __m256 v0 = _mm256_set1_ps(d0), v1 = _mm256_set1_ps(d1);
  store_scaled(out, _mm256_cvtepi8_epi32(load8(b)), v0);
  store_scaled(out + 8, _mm256_cvtepi8_epi32(load8(b + 8)), v0);
  store_scaled(out + 16, _mm256_cvtepi8_epi32(load8(b + 16)), v1);
  store_scaled(out + 24, _mm256_cvtepi8_epi32(load8(b + 24)), v1);
}
void store32_scaled_from(float* out, const void* p, float d) { store32_scaled_from(out, p, d, d); }

}  // namespace

void dequantize_q4_0_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i eight = _mm256_set1_epi32(8), low4 = _mm256_set1_epi32(0x0F);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ4_0), y += kQK) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockQ4_0, d)));
    const __m256i q = _mm256_broadcastsi128_si256(load16(in + offsetof(BlockQ4_0, qs)));
    const __m256i b0 = bytes_to_lanes<0>(q), b1 = bytes_to_lanes<1>(q);  // bytes 0-7, 8-15
    store_scaled(y, _mm256_sub_epi32(_mm256_and_si256(b0, low4), eight), d);
    store_scaled(y + 8, _mm256_sub_epi32(_mm256_and_si256(b1, low4), eight), d);
    store_scaled(y + 16, _mm256_sub_epi32(_mm256_srli_epi32(b0, 4), eight), d);
    store_scaled(y + 24, _mm256_sub_epi32(_mm256_srli_epi32(b1, 4), eight), d);
  }
}

void dequantize_q4_1_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i low4 = _mm256_set1_epi32(0x0F);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ4_1), y += kQK) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockQ4_1, d)));
    const __m256 m = _mm256_set1_ps(load_fp16(in + offsetof(BlockQ4_1, m)));
    const __m256i q = _mm256_broadcastsi128_si256(load16(in + offsetof(BlockQ4_1, qs)));
    const __m256i b0 = bytes_to_lanes<0>(q), b1 = bytes_to_lanes<1>(q);
    store_scaled_plus(y, _mm256_and_si256(b0, low4), d, m);
    store_scaled_plus(y + 8, _mm256_and_si256(b1, low4), d, m);
    store_scaled_plus(y + 16, _mm256_srli_epi32(b0, 4), d, m);
    store_scaled_plus(y + 24, _mm256_srli_epi32(b1, 4), d, m);
  }
}

void dequantize_q5_0_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i sixteen = _mm256_set1_epi8(16);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ5_0), y += kQK) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockQ5_0, d)));
    const __m256i codes = q5_codes(in + offsetof(BlockQ5_0, qs), in + offsetof(BlockQ5_0, qh));
    store32_scaled(y, _mm256_sub_epi8(codes, sixteen), d);
  }
}

void dequantize_q5_1_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ5_1), y += kQK) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockQ5_1, d)));
    const __m256 m = _mm256_set1_ps(load_fp16(in + offsetof(BlockQ5_1, m)));
    store32_scaled_plus(y, q5_codes(in + offsetof(BlockQ5_1, qs), in + offsetof(BlockQ5_1, qh)), d, m);
  }
}


void dequantize_q8_0_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ8_0), y += kQK)
    store32_scaled_from(y, in + offsetof(BlockQ8_0, qs), load_fp16(in + offsetof(BlockQ8_0, d)));
}

void dequantize_q8_1_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ8_1), y += kQK)
    store32_scaled_from(y, in + offsetof(BlockQ8_1, qs), load_fp16(in + offsetof(BlockQ8_1, d)));
}

void dequantize_q8_k_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ8_K), y += kQK_K) {
    const float d = load_f32(in + offsetof(BlockQ8_K, d));
    for (int j = 0; j < kQK_K; j += 32) store32_scaled_from(y + j, in + offsetof(BlockQ8_K, qs) + j, d);
  }
}

void dequantize_iq4_nl_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockIq4Nl), y += kQK) {
    const __m256 d = _mm256_set1_ps(load_fp16(in + offsetof(BlockIq4Nl, d)));
    store32_scaled(y, lookup16(kIq4nlValues, nibbles_lo_hi(load16(in + offsetof(BlockIq4Nl, qs)))), d);
  }
}

void dequantize_mxfp4_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockMxfp4), y += kQK) {
    const __m256 d = _mm256_set1_ps(e8m0_half(static_cast<uint8_t>(in[offsetof(BlockMxfp4, e)])));
    store32_scaled(y, lookup16(kMxfp4Values, nibbles_lo_hi(load16(in + offsetof(BlockMxfp4, qs)))), d);
  }
}

// Elements 128 h + 32 j + (0..31): codes (qs[32 h + l] >> 2j) & 3, sub-blocks 8h + 2j and
// 8h + 2j + 1.
void dequantize_q2_k_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ2_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const uint8_t* scales = b + offsetof(BlockQ2_K, scales);
    const float d = load_fp16(in + offsetof(BlockQ2_K, d)), dmin = load_fp16(in + offsetof(BlockQ2_K, dmin));
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements
      const __m256i q = load32(b + offsetof(BlockQ2_K, qs) + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i codes = _mm256_and_si256(srli_epi8(q, 2 * j), _mm256_set1_epi8(3));
        const uint8_t s0 = scales[8 * h + 2 * j], s1 = scales[8 * h + 2 * j + 1];
        store16x2_scaled_minus(y + 128 * h + 32 * j, codes, _mm256_set1_ps(d * static_cast<float>(s0 & 0xF)),
                               _mm256_set1_ps(dmin * static_cast<float>(s0 >> 4)),
                               _mm256_set1_ps(d * static_cast<float>(s1 & 0xF)),
                               _mm256_set1_ps(dmin * static_cast<float>(s1 >> 4)));
      }
    }
  }
}

// As Q2_K for the two low bits; the third is bit 4h + j of hmask[l] (clear: -4).
void dequantize_q3_k_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i four = _mm256_set1_epi8(4);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ3_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const float d = load_fp16(in + offsetof(BlockQ3_K, d));
    const uint8_t* scales = b + offsetof(BlockQ3_K, scales);
    const __m256i hmask = load32(b + offsetof(BlockQ3_K, hmask));
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements
      const __m256i q = load32(b + offsetof(BlockQ3_K, qs) + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i low = _mm256_and_si256(srli_epi8(q, 2 * j), _mm256_set1_epi8(3));
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << (4 * h + j)));
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), bit);
        const __m256i codes = _mm256_sub_epi8(low, _mm256_andnot_si256(set, four));
        const int sb = 8 * h + 2 * j;
        store16x2_scaled(y + 128 * h + 32 * j, codes,
                         _mm256_set1_ps(d * static_cast<float>(q3_k_scale(scales, sb) - 32)),
                         _mm256_set1_ps(d * static_cast<float>(q3_k_scale(scales, sb + 1) - 32)));
      }
    }
  }
}

namespace {

// The scale fields of a Q4_K or Q5_K block: its packed 6-bit scales and mins, d and dmin.
struct K4Fields {
  const uint8_t* scales;
  float d, dmin;
};
template <class Block>
K4Fields k4_fields(const std::byte* in) {
  return {reinterpret_cast<const uint8_t*>(in) + offsetof(Block, scales), load_fp16(in + offsetof(Block, d)),
          load_fp16(in + offsetof(Block, dmin))};
}

}  // namespace

void dequantize_q4_k_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i low4 = _mm256_set1_epi32(0x0F);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ4_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const K4Fields f = k4_fields<BlockQ4_K>(in);
    const uint8_t* scales = f.scales;
    const float d = f.d, dmin = f.dmin;
    for (int k = 0; k < 4; ++k) {  // 64 elements: sub-block 2k in the low nibbles, 2k + 1 in the high
      uint8_t sc, m;
      scale_min_k4(2 * k, scales, &sc, &m);
      const __m256 d0 = _mm256_set1_ps(d * static_cast<float>(sc)), m0 = _mm256_set1_ps(dmin * static_cast<float>(m));
      scale_min_k4(2 * k + 1, scales, &sc, &m);
      const __m256 d1 = _mm256_set1_ps(d * static_cast<float>(sc)), m1 = _mm256_set1_ps(dmin * static_cast<float>(m));
      float* out = y + 64 * k;
      for (int half = 0; half < 2; ++half) {  // bytes 16 half ... 16 half + 15
        const __m256i q = _mm256_broadcastsi128_si256(load16(b + offsetof(BlockQ4_K, qs) + 32 * k + 16 * half));
        const __m256i b0 = bytes_to_lanes<0>(q), b1 = bytes_to_lanes<1>(q);
        store_scaled_minus(out + 16 * half, _mm256_and_si256(b0, low4), d0, m0);
        store_scaled_minus(out + 16 * half + 8, _mm256_and_si256(b1, low4), d0, m0);
        store_scaled_minus(out + 32 + 16 * half, _mm256_srli_epi32(b0, 4), d1, m1);
        store_scaled_minus(out + 32 + 16 * half + 8, _mm256_srli_epi32(b1, 4), d1, m1);
      }
    }
  }
}

void dequantize_q5_k_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i sixteen = _mm256_set1_epi8(16);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ5_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const K4Fields f = k4_fields<BlockQ5_K>(in);
    const uint8_t* scales = f.scales;
    const float d = f.d, dmin = f.dmin;
    const __m256i qh = load32(b + offsetof(BlockQ5_K, qh));
    for (int k = 0; k < 4; ++k) {  // qs: 32 bytes per 64 elements
      const __m256i q = load32(b + offsetof(BlockQ5_K, qs) + 32 * k);
      for (int half = 0; half < 2; ++half) {
        const int sb = 2 * k + half;
        const __m256i low = half ? srli_epi8(q, 4) : _mm256_and_si256(q, _mm256_set1_epi8(0x0F));
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << sb));
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(qh, bit), bit);
        uint8_t sc, m;
        scale_min_k4(sb, scales, &sc, &m);
        store32_scaled_minus(y + 32 * sb, _mm256_or_si256(low, _mm256_and_si256(set, sixteen)),
                             _mm256_set1_ps(d * static_cast<float>(sc)), _mm256_set1_ps(dmin * static_cast<float>(m)));
      }
    }
  }
}

// Elements 128 h + 32 k + (0..31): q = u - 32 (q6_k_codes), scales of sub-blocks 8h + 2k, +1.
void dequantize_q6_k_avx2(const std::byte* in, int64_t n_blocks, float* y) {
  const __m256i thirty_two = _mm256_set1_epi8(32);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ6_K), y += kQK_K) {
    const auto* sc = reinterpret_cast<const int8_t*>(in + offsetof(BlockQ6_K, scales));
    const float d = load_fp16(in + offsetof(BlockQ6_K, d));
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 4; ++k) {
        const __m256i codes = _mm256_sub_epi8(q6_k_codes(in, h, k), thirty_two);
        const int sb = 8 * h + 2 * k;
        store16x2_scaled(y + 128 * h + 32 * k, codes, _mm256_set1_ps(d * static_cast<float>(sc[sb])),
                         _mm256_set1_ps(d * static_cast<float>(sc[sb + 1])));
      }
    }
  }
}

}  // namespace fixq::gguf::detail
