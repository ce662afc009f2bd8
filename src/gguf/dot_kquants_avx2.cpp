// AVX2 dot products of the K-quants with Q8_K, bit-identical (bound 0) to dot_*_ref.
//
// ggml's generic Q3_K..Q6_K dots keep eight int32 lanes, lane l summing scale * q8 * q over
// the elements e = l (mod 8) of a super-block, and only then go to float. The float part
// here is the same per-lane vector operations; what must be exact are those eight lane
// sums. maddubs adds adjacent byte pairs, so both operands are first shuffled (per 16
// bytes: 0, 8, 1, 9, ... 7, 15) to make each pair two elements of the same lane. Signed
// quants q = u - off are handled as maddubs(u, y) - maddubs(off, y), with u <= 63 and
// |q| <= 32 so that no int16 pair saturates (see each kernel).
#include <type_traits>

#include "gguf/util_avx2.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// Per 16 bytes: element k next to element k + 8 (both in lane k).
__m256i lane_pairs(__m256i v) {
  const __m256i order = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,  //
                                         0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  return _mm256_shuffle_epi8(v, order);
}

// int16 lane sums of 32 elements: per 16-element half h, entry 8h + k = sum over the two
// elements of lane k of (u - off) * y.
__m256i lane_products(__m256i u, __m256i y, int off) {
  const __m256i pu = lane_pairs(u), py = lane_pairs(y);
  const __m256i prod = _mm256_maddubs_epi16(pu, py);
  if (off == 0) return prod;
  return _mm256_sub_epi16(prod, _mm256_maddubs_epi16(_mm256_set1_epi8(static_cast<char>(off)), py));
}

// Given 8 int16 lane sums a (scale sa) and b (scale sb), the 8 int32 lanes sa*a + sb*b.
__m256i scale_two(__m128i a, __m128i b, int sa, int sb) {
  const __m256i ab = _mm256_set_m128i(_mm_unpackhi_epi16(a, b), _mm_unpacklo_epi16(a, b));
  const __m256i s = _mm256_set1_epi32(static_cast<int>((static_cast<uint32_t>(sb) << 16) | (static_cast<uint32_t>(sa) & 0xFFFF)));
  return _mm256_madd_epi16(ab, s);
}

__m128i lo128(__m256i v) { return _mm256_castsi256_si128(v); }
__m128i hi128(__m256i v) { return _mm256_extracti128_si256(v, 1); }

// The per-lane float accumulation shared by Q3_K..Q6_K: sums[l] += d * float(lane[l]).
__m256 add_lanes(__m256 sums, float d, __m256i lanes) {
  return _mm256_add_ps(sums, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes)));
}

// sumf += sums[0], ..., sums[7], in that order.
float finish_lanes(float sumf, __m256 sums) {
  alignas(32) float s[8];
  _mm256_store_ps(s, sums);
  for (float v : s) sumf += v;
  return sumf;
}

// sum over j of bsums[j] * mins[j / 2] for Q4_K / Q5_K (exact in int32 via madd).
int32_t bsums_times_mins(const std::byte* y, const uint8_t* scales) {
  int16_t m16[16];
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, scales, &sc, &m);
    m16[2 * j] = m16[2 * j + 1] = m;
  }
  return hsum_i32(_mm256_madd_epi16(load32(y + offsetof(BlockQ8_K, bsums)), load32(m16)));
}

// The Q4_K / Q5_K dot with codes u in [0, 31]: sub-blocks of 32, scales 6-bit.
template <bool kFiveBit>
float dot_k4(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  using Block = std::conditional_t<kFiveBit, BlockQ5_K, BlockQ4_K>;
  constexpr std::size_t kBlock = sizeof(Block);
  __m256 sums = _mm256_setzero_ps();
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += kBlock, y += sizeof(BlockQ8_K)) {
    const auto* b = reinterpret_cast<const uint8_t*>(x);
    const uint8_t* scales = b + offsetof(Block, scales);
    const auto* q8 = reinterpret_cast<const uint8_t*>(y) + offsetof(BlockQ8_K, qs);
    __m256i lanes = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {  // sub-blocks 2k (low nibbles) and 2k + 1 (high nibbles): 32 qs bytes
      const __m256i q = load32(b + offsetof(Block, qs) + 32 * k);
      __m256i u0 = _mm256_and_si256(q, _mm256_set1_epi8(0x0F)), u1 = srli_epi8(q, 4);
      if constexpr (kFiveBit) {
        const __m256i qh = load32(b + offsetof(BlockQ5_K, qh));
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1 << (2 * k)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(2 << (2 * k)));
        u0 = _mm256_or_si256(u0, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b0), b0), _mm256_set1_epi8(16)));
        u1 = _mm256_or_si256(u1, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b1), b1), _mm256_set1_epi8(16)));
      }
      // |pair| <= 2 * 31 * 128, and the two halves of a sub-block add to <= 4 * 31 * 128.
      const __m256i p0 = lane_products(u0, load32(q8 + 64 * k), 0);
      const __m256i p1 = lane_products(u1, load32(q8 + 64 * k + 32), 0);
      uint8_t s0, s1, m;
      scale_min_k4(2 * k, scales, &s0, &m);
      scale_min_k4(2 * k + 1, scales, &s1, &m);
      lanes = _mm256_add_epi32(lanes, scale_two(_mm_add_epi16(lo128(p0), hi128(p0)),
                                                _mm_add_epi16(lo128(p1), hi128(p1)), s0, s1));
    }
    const float dy = load_f32(y + offsetof(BlockQ8_K, d));
    sums = add_lanes(sums, load_fp16(x + offsetof(Block, d)) * dy, lanes);
    sumf -= load_fp16(x + offsetof(Block, dmin)) * dy * to_f32(bsums_times_mins(y, scales));
  }
  return finish_lanes(sumf, sums);
}

}  // namespace

float dot_q4_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_k4<false>(x, y, n_blocks);
}

float dot_q5_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  return dot_k4<true>(x, y, n_blocks);
}

// Q6_K: codes u = q + 32 in [0, 63], |q| <= 32, so |pair| <= 2 * 32 * 128. Each 32 elements
// are two sub-blocks of 16 (one per 128-bit half) with int8 scales.
float dot_q6_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  __m256 sums = _mm256_setzero_ps();
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockQ6_K), y += sizeof(BlockQ8_K)) {
    const auto* sc = reinterpret_cast<const int8_t*>(x + offsetof(BlockQ6_K, scales));
    const auto* q8 = reinterpret_cast<const uint8_t*>(y) + offsetof(BlockQ8_K, qs);
    __m256i lanes = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 4; ++k) {
        const __m256i p = lane_products(q6_k_codes(x, h, k), load32(q8 + 128 * h + 32 * k), 32);
        const int sb = 8 * h + 2 * k;
        lanes = _mm256_add_epi32(lanes, scale_two(lo128(p), hi128(p), sc[sb], sc[sb + 1]));
      }
    }
    sums = add_lanes(sums, load_fp16(x + offsetof(BlockQ6_K, d)) * load_f32(y + offsetof(BlockQ8_K, d)), lanes);
  }
  return finish_lanes(0.0f, sums);
}

// Q3_K: codes u = q + 4 in [0, 7] (two low bits, +4 when the hmask bit is set), signed
// 6-bit scales, sub-blocks of 16 as in Q6_K.
float dot_q3_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  __m256 sums = _mm256_setzero_ps();
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockQ3_K), y += sizeof(BlockQ8_K)) {
    const auto* b = reinterpret_cast<const uint8_t*>(x);
    const uint8_t* scales = b + offsetof(BlockQ3_K, scales);
    const auto* q8 = reinterpret_cast<const uint8_t*>(y) + offsetof(BlockQ8_K, qs);
    const __m256i hmask = load32(b + offsetof(BlockQ3_K, hmask));
    __m256i lanes = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements
      const __m256i q = load32(b + offsetof(BlockQ3_K, qs) + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i low = _mm256_and_si256(srli_epi8(q, 2 * j), _mm256_set1_epi8(3));
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << (4 * h + j)));
        const __m256i plus4 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), bit), _mm256_set1_epi8(4));
        const __m256i p = lane_products(_mm256_or_si256(low, plus4), load32(q8 + 128 * h + 32 * j), 4);
        const int sb = 8 * h + 2 * j;
        lanes = _mm256_add_epi32(lanes, scale_two(lo128(p), hi128(p), q3_k_scale(scales, sb) - 32,
                                                  q3_k_scale(scales, sb + 1) - 32));
      }
    }
    sums = add_lanes(sums, load_fp16(x + offsetof(BlockQ3_K, d)) * load_f32(y + offsetof(BlockQ8_K, d)), lanes);
  }
  return finish_lanes(0.0f, sums);
}

// Q2_K needs no lanes: isum = sum_j (sc_j & 15) * (q8 . codes of sub-block j) and summs
// = bsums . (sc >> 4) are plain integers (codes <= 3, so |pair| <= 2 * 3 * 128).
float dot_q2_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockQ2_K), y += sizeof(BlockQ8_K)) {
    const auto* b = reinterpret_cast<const uint8_t*>(x);
    const uint8_t* scales = b + offsetof(BlockQ2_K, scales);
    const auto* q8 = reinterpret_cast<const uint8_t*>(y) + offsetof(BlockQ8_K, qs);
    const __m128i sc = load16(scales);
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), _mm_set1_epi8(0x0F)));
    __m256i acc = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements
      const __m256i q = load32(b + offsetof(BlockQ2_K, qs) + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const __m256i codes = _mm256_and_si256(srli_epi8(q, 2 * j), _mm256_set1_epi8(3));
        const __m256i p = _mm256_maddubs_epi16(codes, load32(q8 + 128 * h + 32 * j));
        const int sb = 8 * h + 2 * j;  // the two halves of p belong to sub-blocks sb, sb + 1
        const __m256i s = _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(scales[sb + 1] & 0xF)),
                                           _mm_set1_epi16(static_cast<int16_t>(scales[sb] & 0xF)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, s));
      }
    }
    const int32_t isum = hsum_i32(acc);
    const int32_t summs = hsum_i32(_mm256_madd_epi16(load32(y + offsetof(BlockQ8_K, bsums)), mins16));
    const float dy = load_f32(y + offsetof(BlockQ8_K, d));
    sumf += dy * load_fp16(x + offsetof(BlockQ2_K, d)) * to_f32(isum) - dy * load_fp16(x + offsetof(BlockQ2_K, dmin)) * to_f32(summs);
  }
  return sumf;
}

}  // namespace fixq::gguf::detail
