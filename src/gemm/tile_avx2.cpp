// AVX2 tile kernel: 16 columns x up to 4 rows, vpmaddwd on int16 pairs (exact: unlike
// vpmaddubsw it never saturates for these operand ranges). S8 weights are widened to
// int16 in registers, so packed B stays one byte per weight in memory.
#include <immintrin.h>

#include "gemm/kernels.h"

namespace fixq::gemm_detail {

namespace {

// The 16 columns' pairs at one k-pair as two vectors of 8 int16 pairs.
inline void load_b(const void* b, bool b16, int64_t kp, __m256i* lo, __m256i* hi) {
  if (b16) {
    const auto* p = static_cast<const int16_t*>(b) + kp * kNr * 2;
    *lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    *hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
  } else {
    const auto* p = static_cast<const int8_t*>(b) + kp * kNr * 2;
    *lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    *hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
  }
}

template <int MR>
void tile(const TileArgs& t) {
  __m256i acc[MR][2];
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t kp = 0; kp < t.kc; ++kp) {
    __m256i b_lo, b_hi;
    load_b(t.b, t.b16, kp, &b_lo, &b_hi);
    for (int r = 0; r < MR; ++r) {
      int32_t pair;
      __builtin_memcpy(&pair, t.a + r * t.kp_stride + kp, sizeof pair);
      const __m256i a = _mm256_set1_epi32(pair);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(b_lo, a));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(b_hi, a));
    }
  }
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.tile + r * kNr), acc[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.tile + r * kNr + 8), acc[r][1]);
  }
}

}  // namespace

void tile_avx2(const TileArgs& t) {
  switch (t.mr) {
    case 1: tile<1>(t); break;
    case 2: tile<2>(t); break;
    case 3: tile<3>(t); break;
    default: tile<4>(t); break;
  }
}

}  // namespace fixq::gemm_detail
