// AVX2 dot products of the two codebook formats with a scale per sub-block: IQ4_XS
// (kIq4nlValues, a 6-bit scale per 32 under an fp16 super-block scale, with Q8_K) and NVFP4
// (E2M1 values, a UE4M3 scale per 16, with Q8_0). Bit-identical (bound 0) to the references:
// the 16-entry table is one pshufb, integer sums are exact, and the float
// operations are the reference's, per sub-block, in its order.
//
// Exact sums: IQ4_XS values span -127..113 against any int8, so they widen to int16 for
// madd (exact for every byte, -128 included). NVFP4 values (doubled E2M1, -12..12) go
// through maddubs as u = v + 12 in [0, 24]: maddubs(u, y) - maddubs(12, y), |pair| <= 2 *
// 24 * 128.
#include "gguf/util_avx2.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"
#include "gguf/unpack_codebook_avx2.h"

namespace fixq::gguf::detail {

namespace {

// kMxfp4Values + 12, the doubled E2M1 values as unsigned codes.
constexpr int8_t kE2m1Plus12[16] = {12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0};

// int32 partial sums (8 lanes) of x[i] * y[i] over 32 int8 pairs.
__m256i dot_i8_lanes(__m256i x, __m256i y) {
  const __m256i lo = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(x)),
                                       _mm256_cvtepi8_epi16(_mm256_castsi256_si128(y)));
  const __m256i hi = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1)),
                                       _mm256_cvtepi8_epi16(_mm256_extracti128_si256(y, 1)));
  return _mm256_add_epi32(lo, hi);
}

// Lane k = the sum of the eight lanes of v[k].
__m256i sum_lanes8(const __m256i* v) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  // a holds v[0..3] summed over lanes 0-3 (low half) and 4-7 (high half); b the same for v[4..7].
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

}  // namespace

// Per sub-block k: sumf += (d4d8 * float(ls_k - 32)) * float(sumi_k). The products are
// formed for all eight sub-blocks at once; only the additions run in sequence.
float dot_iq4_xs_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockIq4Xs), y += sizeof(BlockQ8_K)) {
    __m256i partial[8];
    for (int ib = 0; ib < kQK_K / 32; ++ib) {  // x's qs: 16 bytes per sub-block of 32
      const __m256i v = lookup16(kIq4nlValues, nibbles_lo_hi(load16(x + offsetof(BlockIq4Xs, qs) + 16 * ib)));
      partial[ib] = dot_i8_lanes(v, load32(y + offsetof(BlockQ8_K, qs) + 32 * ib));
    }
    const __m256 d4d8 = _mm256_set1_ps(load_fp16(x + offsetof(BlockIq4Xs, d)) * load_f32(y + offsetof(BlockQ8_K, d)));
    const __m256 dl = _mm256_mul_ps(d4d8, _mm256_cvtepi32_ps(iq4_xs_scales(x)));
    alignas(32) float terms[8];
    _mm256_store_ps(terms, _mm256_mul_ps(dl, _mm256_cvtepi32_ps(sum_lanes8(partial))));
    for (float t : terms) sumf += t;
  }
  return sumf;
}

// Q8_0 block t of the pair holds sub-blocks 2t (its low 16 values) and 2t + 1 (high 16).
float dot_nvfp4_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks) {
  float sumf = 0.0f;
  const __m256i twelve = _mm256_set1_epi8(12), ones = _mm256_set1_epi16(1);
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BlockNvfp4), y += 2 * sizeof(BlockQ8_0)) {
    __m256i s[2];
    for (int t = 0; t < 2; ++t) {
      const __m256i u = lookup16(kE2m1Plus12, nvfp4_codes(x + offsetof(BlockNvfp4, qs) + 16 * t));
      const __m256i q8 = load32(y + t * sizeof(BlockQ8_0) + offsetof(BlockQ8_0, qs));
      const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(u, q8), _mm256_maddubs_epi16(twelve, q8));
      s[t] = _mm256_madd_epi16(pairs, ones);  // lanes 0-3: sub-block 2t, lanes 4-7: 2t + 1
    }
    // hadd twice: low half lane 0 / 1 = sub-blocks 0 / 2, high half lane 0 / 1 = 1 / 3.
    __m256i h = _mm256_hadd_epi32(s[0], s[1]);
    h = _mm256_hadd_epi32(h, h);
    const __m128i lo = _mm256_castsi256_si128(h), hi = _mm256_extracti128_si256(h, 1);
    const int32_t sumi[4] = {_mm_cvtsi128_si32(lo), _mm_cvtsi128_si32(hi), _mm_extract_epi32(lo, 1),
                             _mm_extract_epi32(hi, 1)};
    const auto* d = reinterpret_cast<const uint8_t*>(x + offsetof(BlockNvfp4, d));
    for (int sb = 0; sb < 4; ++sb)
      sumf += load_fp16(y + (sb / 2) * sizeof(BlockQ8_0) + offsetof(BlockQ8_0, d)) * kUe4m3Half[d[sb]] * to_f32(sumi[sb]);
  }
  return sumf;
}

}  // namespace fixq::gguf::detail
