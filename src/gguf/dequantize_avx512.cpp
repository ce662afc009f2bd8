// AVX-512 dequantizers of every format, 16 floats per vector. As in the AVX2 ones, each
// output is the reference's single IEEE operation (or the same two, in the same order) on
// the same operands: float(q) * d, float(q) * d + m, (d * sc) * float(q) - dmin * m ... The
// integer-to-float step is a vpermps lookup where the codes are 4 or 5 bits wide: the table
// holds exactly the floats the reference converts, and vpermps reads only the low 4 bits of
// each index (5 for vpermt2ps), so the code needs no mask.
#include "gguf/util_avx512.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels_avx512.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

namespace {

// Tables of float(value) by 4-bit code.
struct Tables {
  alignas(64) float q4_0[16];    // code - 8
  alignas(64) float code[32];    // code (0..31)
  alignas(64) float q5_0[32];    // code - 16
  alignas(64) float iq4nl[16];   // kIq4nlValues
  alignas(64) float mxfp4[16];   // kMxfp4Values (doubled E2M1)
  alignas(64) float two_bit[16]; // code & 3 (Q2_K: the shifted byte's higher bits are ignored)
  alignas(64) float q3[16];      // (code & 7) - 4 (Q3_K: low two bits | set high bit << 2)
  alignas(64) float ternary[16]; // (code & 3) - 1
};

constexpr Tables make_tables() {
  Tables t{};
  for (int c = 0; c < 16; ++c) {
    t.q4_0[c] = static_cast<float>(c - 8);
    t.iq4nl[c] = static_cast<float>(kIq4nlValues[c]);
    t.mxfp4[c] = static_cast<float>(kMxfp4Values[c]);
    t.two_bit[c] = static_cast<float>(c & 3);
    t.q3[c] = static_cast<float>((c & 7) - 4);
    t.ternary[c] = static_cast<float>((c & 3) - 1);
  }
  for (int c = 0; c < 32; ++c) {
    t.code[c] = static_cast<float>(c);
    t.q5_0[c] = static_cast<float>(c - 16);
  }
  return t;
}

constexpr Tables kTables = make_tables();

FIXQ_GGUF_INLINE __m512 table16(const float* t) { return _mm512_load_ps(t); }

// 16 bytes at p, zero-extended into 16 int32 lanes.
FIXQ_GGUF_INLINE __m512i bytes16(const void* p) { return _mm512_cvtepu8_epi32(load16(p)); }

// The float of 4-bit code (low 4 bits of each lane) from a 16-entry table.
FIXQ_GGUF_INLINE __m512 lut16(__m512i codes, __m512 table) { return _mm512_permutexvar_ps(codes, table); }

// 16 + 16 outputs of a Q4_0-style block (qs at p: element j in the low nibble of byte j,
// j + 16 in the high one): table[code] * d, in the reference's operand order.
FIXQ_GGUF_INLINE void store_nibbles_scaled(float* y, const void* qs, __m512 table, __m512 d) {
  const __m512i b = bytes16(qs);
  _mm512_storeu_ps(y, _mm512_mul_ps(lut16(b, table), d));
  _mm512_storeu_ps(y + 16, _mm512_mul_ps(lut16(_mm512_srli_epi32(b, 4), table), d));
}

// The same with d first (d * value), for the formats whose reference writes it so (the
// product is commutative, so the order only documents the reference).
FIXQ_GGUF_INLINE void store_nibbles_dscaled(float* y, const void* qs, __m512 table, __m512 d) {
  const __m512i b = bytes16(qs);
  _mm512_storeu_ps(y, _mm512_mul_ps(d, lut16(b, table)));
  _mm512_storeu_ps(y + 16, _mm512_mul_ps(d, lut16(_mm512_srli_epi32(b, 4), table)));
}

// 32 int8 at p times d: float(q) * d.
FIXQ_GGUF_INLINE void store_i8x32_scaled(float* y, const std::byte* p, __m512 d) {
  _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p))), d));
  _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p + 16))), d));
}

// 32 int8 at p times d, d first (Q8_K's d * q).
FIXQ_GGUF_INLINE void store_i8x32_dscaled(float* y, const std::byte* p, __m512 d) {
  _mm512_storeu_ps(y, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p)))));
  _mm512_storeu_ps(y + 16, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p + 16)))));
}

// Q5 blocks: codes (low nibble | fifth bit << 4) of elements 0..15 and 16..31, as the low
// five bits of int32 lanes (higher bits are ignored by vpermt2ps).
FIXQ_GGUF_INLINE void q5_codes(const std::byte* qs, const std::byte* qh, __m512i* lo, __m512i* hi) {
  const uint32_t h = load_as<uint32_t>(qh);
  const __m512i b = bytes16(qs), sixteen = _mm512_set1_epi32(16), low4 = _mm512_set1_epi32(0x0F);
  *lo = _mm512_mask_add_epi32(_mm512_and_si512(b, low4), static_cast<__mmask16>(h), _mm512_and_si512(b, low4), sixteen);
  const __m512i b_hi = _mm512_srli_epi32(b, 4);
  *hi = _mm512_mask_add_epi32(b_hi, static_cast<__mmask16>(h >> 16), b_hi, sixteen);
}

FIXQ_GGUF_INLINE __m512 lut32(__m512i codes, const float* t) {
  return _mm512_permutex2var_ps(_mm512_load_ps(t), codes, _mm512_load_ps(t + 16));
}

}  // namespace

void dequantize_q4_0(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.q4_0);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ4_0), y += kQK)
    store_nibbles_scaled(y, in + offsetof(BlockQ4_0, qs), t, _mm512_set1_ps(load_fp16(in + offsetof(BlockQ4_0, d))));
}

void dequantize_q4_1(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = _mm512_load_ps(kTables.code);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ4_1), y += kQK) {
    const __m512 d = _mm512_set1_ps(load_fp16(in + offsetof(BlockQ4_1, d)));
    const __m512 m = _mm512_set1_ps(load_fp16(in + offsetof(BlockQ4_1, m)));
    const __m512i b = bytes16(in + offsetof(BlockQ4_1, qs));
    _mm512_storeu_ps(y, _mm512_add_ps(_mm512_mul_ps(lut16(b, t), d), m));
    _mm512_storeu_ps(y + 16, _mm512_add_ps(_mm512_mul_ps(lut16(_mm512_srli_epi32(b, 4), t), d), m));
  }
}

void dequantize_q5_0(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ5_0), y += kQK) {
    const __m512 d = _mm512_set1_ps(load_fp16(in + offsetof(BlockQ5_0, d)));
    __m512i lo, hi;
    q5_codes(in + offsetof(BlockQ5_0, qs), in + offsetof(BlockQ5_0, qh), &lo, &hi);
    _mm512_storeu_ps(y, _mm512_mul_ps(lut32(lo, kTables.q5_0), d));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(lut32(hi, kTables.q5_0), d));
  }
}

void dequantize_q5_1(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ5_1), y += kQK) {
    const __m512 d = _mm512_set1_ps(load_fp16(in + offsetof(BlockQ5_1, d)));
    const __m512 m = _mm512_set1_ps(load_fp16(in + offsetof(BlockQ5_1, m)));
    __m512i lo, hi;
    q5_codes(in + offsetof(BlockQ5_1, qs), in + offsetof(BlockQ5_1, qh), &lo, &hi);
    _mm512_storeu_ps(y, _mm512_add_ps(_mm512_mul_ps(lut32(lo, kTables.code), d), m));
    _mm512_storeu_ps(y + 16, _mm512_add_ps(_mm512_mul_ps(lut32(hi, kTables.code), d), m));
  }
}

void dequantize_q8_0(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ8_0), y += kQK)
    store_i8x32_scaled(y, in + offsetof(BlockQ8_0, qs), _mm512_set1_ps(load_fp16(in + offsetof(BlockQ8_0, d))));
}

void dequantize_q8_1(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ8_1), y += kQK)
    store_i8x32_scaled(y, in + offsetof(BlockQ8_1, qs), _mm512_set1_ps(load_fp16(in + offsetof(BlockQ8_1, d))));
}

void dequantize_q8_k(const std::byte* in, int64_t n_blocks, float* y) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ8_K), y += kQK_K) {
    const __m512 d = _mm512_set1_ps(load_as<float>(in + offsetof(BlockQ8_K, d)));
    for (int j = 0; j < kQK_K; j += 32) store_i8x32_dscaled(y + j, in + offsetof(BlockQ8_K, qs) + j, d);
  }
}

void dequantize_iq4_nl(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.iq4nl);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockIq4Nl), y += kQK)
    store_nibbles_dscaled(y, in + offsetof(BlockIq4Nl, qs), t, _mm512_set1_ps(load_fp16(in + offsetof(BlockIq4Nl, d))));
}

void dequantize_mxfp4(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.mxfp4);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockMxfp4), y += kQK)
    store_nibbles_scaled(y, in + offsetof(BlockMxfp4, qs), t,
                         _mm512_set1_ps(e8m0_half(static_cast<uint8_t>(in[offsetof(BlockMxfp4, e)]))));
}

void dequantize_iq4_xs(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.iq4nl);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockIq4Xs)) {
    const float d = load_fp16(in + offsetof(BlockIq4Xs, d));
    const auto h = load_as<uint16_t>(in + offsetof(BlockIq4Xs, scales_h));
    const auto* l = reinterpret_cast<const uint8_t*>(in + offsetof(BlockIq4Xs, scales_l));
    for (int ib = 0; ib < kQK_K / 32; ++ib, y += 32) {  // qs: 16 bytes per sub-block of 32
      const int ls = ((l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((h >> (2 * ib)) & 3) << 4);  // iq4_xs_scale
      store_nibbles_dscaled(y, in + offsetof(BlockIq4Xs, qs) + 16 * ib, t, _mm512_set1_ps(d * to_f32(ls - 32)));
    }
  }
}

// Per sub-block of 16: the 8 low nibbles, then the 8 high nibbles of its 8 bytes.
void dequantize_nvfp4(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.mxfp4);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockNvfp4)) {
    const auto* d = reinterpret_cast<const uint8_t*>(in + offsetof(BlockNvfp4, d));
    for (int s = 0; s < kQKNvfp4 / kQKNvfp4Sub; ++s, y += kQKNvfp4Sub) {  // qs: 8 bytes per sub-block
      const __m512i b = _mm512_cvtepu8_epi32(_mm_set1_epi64x(load_as<long long>(in + offsetof(BlockNvfp4, qs) + 8 * s)));
      const __m512i codes = _mm512_mask_srli_epi32(b, 0xFF00, b, 4);
      _mm512_storeu_ps(y, _mm512_mul_ps(lut16(codes, t), _mm512_set1_ps(kUe4m3Half[d[s]])));
    }
  }
}

// Element e = 128 h + 32 j + l: code (qs[32 h + l] >> 2j) & 3, scale byte e / 16.
void dequantize_q2_k(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.two_bit);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ2_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const uint8_t* scales = b + offsetof(BlockQ2_K, scales);
    const uint8_t* qs = b + offsetof(BlockQ2_K, qs);
    const float d = load_fp16(in + offsetof(BlockQ2_K, d)), dmin = load_fp16(in + offsetof(BlockQ2_K, dmin));
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements, loaded 16 at a time
      const __m512i q[2] = {bytes16(qs + 32 * h), bytes16(qs + 32 * h + 16)};
      for (int j = 0; j < 4; ++j) {
        for (int half = 0; half < 2; ++half) {
          const uint8_t sc = scales[8 * h + 2 * j + half];
          const __m512 dl = _mm512_set1_ps(d * to_f32(sc & 0xF)), ml = _mm512_set1_ps(dmin * to_f32(sc >> 4));
          const __m512 v = lut16(_mm512_srli_epi32(q[half], 2 * j), t);
          _mm512_storeu_ps(y + 128 * h + 32 * j + 16 * half, _mm512_sub_ps(_mm512_mul_ps(dl, v), ml));
        }
      }
    }
  }
}

// As Q2_K for the two low bits; the third is bit 4h + j of hmask[l] (clear: -4).
void dequantize_q3_k(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.q3);
  const __m512i three = _mm512_set1_epi32(3), four = _mm512_set1_epi32(4);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ3_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const float d = load_fp16(in + offsetof(BlockQ3_K, d));
    const uint8_t* hmask = b + offsetof(BlockQ3_K, hmask);
    const uint8_t* qs = b + offsetof(BlockQ3_K, qs);
    const uint8_t* scales = b + offsetof(BlockQ3_K, scales);
    const __m512i hm[2] = {bytes16(hmask), bytes16(hmask + 16)};  // 16 bytes at a time
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements
      const __m512i q[2] = {bytes16(qs + 32 * h), bytes16(qs + 32 * h + 16)};
      for (int j = 0; j < 4; ++j) {
        const __m512i bit = _mm512_set1_epi32(1 << (4 * h + j));
        for (int half = 0; half < 2; ++half) {
          const int sb = 8 * h + 2 * j + half;
          const __m512i low = _mm512_and_si512(_mm512_srli_epi32(q[half], 2 * j), three);
          const __m512i code = _mm512_mask_add_epi32(low, _mm512_test_epi32_mask(hm[half], bit), low, four);
          const __m512 dl = _mm512_set1_ps(d * to_f32(q3_k_scale(scales, sb) - 32));
          _mm512_storeu_ps(y + 128 * h + 32 * j + 16 * half, _mm512_mul_ps(dl, lut16(code, t)));
        }
      }
    }
  }
}

void dequantize_q4_k(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = _mm512_load_ps(kTables.code);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ4_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const uint8_t* scales = b + offsetof(BlockQ4_K, scales);
    const uint8_t* qs = b + offsetof(BlockQ4_K, qs);
    const float d = load_fp16(in + offsetof(BlockQ4_K, d)), dmin = load_fp16(in + offsetof(BlockQ4_K, dmin));
    for (int k = 0; k < 4; ++k) {  // sub-block 2k in the low nibbles of 32 bytes, 2k + 1 in the high ones
      const __m512i q[2] = {bytes16(qs + 32 * k), bytes16(qs + 32 * k + 16)};
      for (int s = 0; s < 2; ++s) {
        uint8_t sc, m;
        scale_min_k4(2 * k + s, scales, &sc, &m);
        const __m512 dl = _mm512_set1_ps(d * to_f32(sc)), ml = _mm512_set1_ps(dmin * to_f32(m));
        for (int half = 0; half < 2; ++half) {
          const __m512i codes = s ? _mm512_srli_epi32(q[half], 4) : q[half];
          _mm512_storeu_ps(y + 64 * k + 32 * s + 16 * half, _mm512_sub_ps(_mm512_mul_ps(dl, lut16(codes, t)), ml));
        }
      }
    }
  }
}

void dequantize_q5_k(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512i low4 = _mm512_set1_epi32(0x0F), sixteen = _mm512_set1_epi32(16);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ5_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    const uint8_t* scales = b + offsetof(BlockQ5_K, scales);
    const uint8_t* qh_bytes = b + offsetof(BlockQ5_K, qh);
    const uint8_t* qs = b + offsetof(BlockQ5_K, qs);
    const float d = load_fp16(in + offsetof(BlockQ5_K, d)), dmin = load_fp16(in + offsetof(BlockQ5_K, dmin));
    const __m512i qh[2] = {bytes16(qh_bytes), bytes16(qh_bytes + 16)};  // 16 bytes at a time
    for (int k = 0; k < 4; ++k) {  // qs: 32 bytes per 64 elements
      const __m512i q[2] = {bytes16(qs + 32 * k), bytes16(qs + 32 * k + 16)};
      for (int s = 0; s < 2; ++s) {
        const int sb = 2 * k + s;
        uint8_t sc, m;
        scale_min_k4(sb, scales, &sc, &m);
        const __m512 dl = _mm512_set1_ps(d * to_f32(sc)), ml = _mm512_set1_ps(dmin * to_f32(m));
        const __m512i bit = _mm512_set1_epi32(1 << sb);
        for (int half = 0; half < 2; ++half) {
          const __m512i low = _mm512_and_si512(s ? _mm512_srli_epi32(q[half], 4) : q[half], low4);
          const __m512i code = _mm512_mask_add_epi32(low, _mm512_test_epi32_mask(qh[half], bit), low, sixteen);
          _mm512_storeu_ps(y + 32 * sb + 16 * half, _mm512_sub_ps(_mm512_mul_ps(dl, lut32(code, kTables.code)), ml));
        }
      }
    }
  }
}

// Element e = 128 h + 32 k + l: low nibble (k < 2) or high nibble (k >= 2) of
// ql[64 h + 32 (k % 2) + l], two high bits at 2k of qh[32 h + l]; q = code - 32. The codes
// of 64 elements at a time as bytes (k = 0, 1 from the low nibbles of ql's 64 bytes, k = 2,
// 3 from the high ones, qh's 32 bytes in both halves shifted per half), then 16 at a time
// widened to int32 and scaled by the float d * sc of their 16.
void dequantize_q6_k(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30), thirty_two = _mm512_set1_epi8(32);
  // Per 256-bit half (k even, k odd): qh bits 2k, 2k + 1 to bits 4, 5.
  const __m512i shl01 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i shr23 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockQ6_K), y += kQK_K) {
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    // d * float(sc[j]) for the 16 scales, as the reference forms each.
    const __m512 dsc = _mm512_mul_ps(_mm512_set1_ps(load_fp16(in + offsetof(BlockQ6_K, d))),
                                     _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(b + offsetof(BlockQ6_K, scales)))));
    for (int h = 0; h < 2; ++h) {
      const __m512i ql = _mm512_loadu_si512(b + offsetof(BlockQ6_K, ql) + 64 * h);
      const __m512i qh = _mm512_broadcast_i64x4(load32(b + offsetof(BlockQ6_K, qh) + 32 * h));  // both halves
      const __m512i hi01 = _mm512_and_si512(_mm512_sllv_epi16(qh, shl01), bits45);
      const __m512i hi23 = _mm512_and_si512(_mm512_srlv_epi16(qh, shr23), bits45);
      // (nibble & 15) | high bits, minus 32: k = 0, 1 from the low nibbles, k = 2, 3 from the high ones.
      const __m512i q[2] = {
          _mm512_sub_epi8(_mm512_ternarylogic_epi32(ql, low4, hi01, 0xEA), thirty_two),
          _mm512_sub_epi8(_mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), low4, hi23, 0xEA), thirty_two)};
      for (int c = 0; c < 8; ++c) {  // elements 128 h + 16 c: byte 16 (c % 4) of q[c / 4]
        __m128i bytes;
        switch (c % 4) {
          case 0: bytes = _mm512_castsi512_si128(q[c / 4]); break;
          case 1: bytes = _mm512_extracti32x4_epi32(q[c / 4], 1); break;
          case 2: bytes = _mm512_extracti32x4_epi32(q[c / 4], 2); break;
          default: bytes = _mm512_extracti32x4_epi32(q[c / 4], 3); break;
        }
        const __m512 dl = _mm512_permutexvar_ps(_mm512_set1_epi32(8 * h + c), dsc);
        _mm512_storeu_ps(y + 128 * h + 16 * c, _mm512_mul_ps(dl, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes))));
      }
    }
  }
}

// TQ1_0: digit n of byte b is ((b * 3^n mod 256) * 3) >> 8, computed in int32 lanes.
void dequantize_tq1_0(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.ternary);
  const __m512i byte = _mm512_set1_epi32(0xFF);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockTq1_0)) {
    const __m512 d = _mm512_set1_ps(load_fp16(in + offsetof(BlockTq1_0, d)));
    const std::byte* qs = in + offsetof(BlockTq1_0, qs);
    // digits n = 0..4 of 16 bytes at p, elements out + stride * n + (0..15).
    auto digits = [&](const std::byte* p, int planes, float* out, int stride) {
      __m512i q = bytes16(p);
      for (int n = 0; n < planes; ++n) {
        const __m512i digit = _mm512_srli_epi32(_mm512_add_epi32(q, _mm512_add_epi32(q, q)), 8);
        _mm512_storeu_ps(out + stride * n, _mm512_mul_ps(lut16(digit, t), d));
        q = _mm512_and_si512(_mm512_add_epi32(q, _mm512_add_epi32(q, q)), byte);
      }
    };
    digits(qs, 5, y, 32);             // qs[0..15]: elements 32n + m
    digits(qs + 16, 5, y + 16, 32);   // qs[16..31]
    digits(qs + 32, 5, y + 160, 16);  // qs[32..47]: elements 160 + 16n + m
    // qh[0..3]: element 240 + 4n + j is digit n of qh[j].
    const __m512i h = _mm512_cvtepu8_epi32(_mm_set1_epi32(load_as<int>(in + offsetof(BlockTq1_0, qh))));
    const __m512i pow3 = _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27);
    const __m512i q = _mm512_and_si512(_mm512_mullo_epi32(h, pow3), byte);
    const __m512i digit = _mm512_srli_epi32(_mm512_add_epi32(q, _mm512_add_epi32(q, q)), 8);
    _mm512_storeu_ps(y + 240, _mm512_mul_ps(lut16(digit, t), d));
    y += kQK_K;
  }
}

// TQ2_0: byte 32c + m holds element 128c + 32n + m at bits 2n; value (code - 1) * d.
void dequantize_tq2_0(const std::byte* in, int64_t n_blocks, float* y) {
  const __m512 t = table16(kTables.ternary);
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(BlockTq2_0), y += kQK_K) {
    const __m512 d = _mm512_set1_ps(load_fp16(in + offsetof(BlockTq2_0, d)));
    for (int c = 0; c < 2; ++c)
      for (int half = 0; half < 2; ++half) {  // qs: 32 bytes per 128 elements, 16 at a time
        const __m512i q = bytes16(in + offsetof(BlockTq2_0, qs) + 32 * c + 16 * half);
        for (int n = 0; n < 4; ++n)
          _mm512_storeu_ps(y + 128 * c + 32 * n + 16 * half, _mm512_mul_ps(lut16(_mm512_srli_epi32(q, 2 * n), t), d));
      }
  }
}

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
