// AVX2 micro-kernels.
//   int16 pairs x s8 / s16, 4 x 16: vpmaddwd on int16 pairs. Exact: unlike vpmaddubsw it
//     never saturates for these operand ranges. s8 weights stay one byte in memory and are
//     widened in registers.
//   s8 x s8 with the sign trick, 2 x 32: vpmaddubsw multiplies unsigned by signed bytes and
//     adds pairs into int16 with saturation. With a = |x| (at most 128) and w' = w * sign(x)
//     (vpsignb) in [-127, 127], a pair is at most 2 * 128 * 127 = 32512: never saturated, so
//     the sum is exact at the speed of the instruction peers use inexactly. Weights of -128
//     are packed as -127 (PanelFormat::minus128_as_127) and corrected by the driver.
#include "cpu/x86.h"

#include <cstring>

#include "gemm/kernels.h"

namespace fixq::gemm_detail::FIXQ_KERNEL_NS(avx2) {

namespace {

constexpr int kNr16 = 16, kNr32 = 32;
constexpr int64_t kKcBytes = 32 * 1024;  // B panel blocks stay in L1

// Writes (or adds) the real part of an accumulator row of n lanes (a multiple of 8).
template <int N>
[[gnu::always_inline]] inline void store_row(const TileArgs& t, int r, const __m256i (&acc)[N / 8]) {
  int32_t* c = t.c + r * t.ldc;
  alignas(32) int32_t tmp[N];
  for (int v = 0; v < N / 8; ++v) _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8 * v), acc[v]);
  if (t.accumulate) {
    for (int j = 0; j < t.cols; ++j) c[j] += tmp[j];
  } else if (t.init != nullptr) {
    for (int j = 0; j < t.cols; ++j) c[j] = t.init[j] + tmp[j];
  } else {
    std::memcpy(c, tmp, static_cast<size_t>(t.cols) * sizeof(int32_t));
  }
}

template <int MR, bool B16>
void pairs_tile(const TileArgs& t) {
  __m256i acc[MR][2];
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const auto* a = static_cast<const int32_t*>(t.a);
  for (int64_t g = 0; g < t.groups; ++g) {
    __m256i b_lo, b_hi;
    if constexpr (B16) {
      const auto* p = static_cast<const int16_t*>(t.b) + g * kNr16 * 2;
      b_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      b_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
    } else {
      const auto* p = static_cast<const int8_t*>(t.b) + g * kNr16 * 2;
      b_lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      b_hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
    }
    for (int r = 0; r < MR; ++r) {
      // The 4-row micro-panel: pair (g, r) at a[g * 4 + r].
      const __m256i av = _mm256_set1_epi32(a[g * 4 + r]);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(b_lo, av));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(b_hi, av));
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) store_row<kNr16>(t, r, acc[r]);
}

template <bool B16>
void pairs(const TileArgs& t) {
  switch (t.rows) {
    case 1: pairs_tile<1, B16>(t); break;
    case 2: pairs_tile<2, B16>(t); break;
    case 3: pairs_tile<3, B16>(t); break;
    default: pairs_tile<4, B16>(t); break;
  }
}

template <int MR>
void sign_tile(const TileArgs& t) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_setzero_si256();
  const auto* a = static_cast<const int8_t*>(t.a);
  const auto* b = static_cast<const int8_t*>(t.b);
  for (int64_t g = 0; g < t.groups; ++g) {
    __m256i w[4];
    for (int v = 0; v < 4; ++v) w[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + (g * kNr32 + 8 * v) * 4));
    for (int r = 0; r < MR; ++r) {
      // Row r of the 2-row micro-panel: 4 bytes of x, then 4 of |x|.
      int32_t x4, abs4;
      std::memcpy(&x4, a + (g * 2 + r) * 8, 4);
      std::memcpy(&abs4, a + (g * 2 + r) * 8 + 4, 4);
      const __m256i sx = _mm256_set1_epi32(x4), ax = _mm256_set1_epi32(abs4);
      for (int v = 0; v < 4; ++v)
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(w[v], sx)), ones));
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < MR; ++r) store_row<kNr32>(t, r, acc[r]);
}

void sign(const TileArgs& t) {
  if (t.rows == 1) sign_tile<1>(t);
  else sign_tile<2>(t);
}

constexpr MicroKernel kPairsB8{"avx2 vpmaddwd int16 pairs x s8, 4 x 16", 4, APacking::Pairs16, {2, 1, kNr16, false},
                               pairs<false>, kKcBytes};
constexpr MicroKernel kPairsB16{"avx2 vpmaddwd int16 pairs x s16, 4 x 16", 4, APacking::Pairs16,
                                {2, 2, kNr16, false}, pairs<true>, kKcBytes};
constexpr MicroKernel kSign{"avx2 vpmaddubsw sign trick s8 x s8, 2 x 32", 2, APacking::Quads8SignAbs,
                            {4, 1, kNr32, true}, sign, kKcBytes};

}  // namespace

FIXQ_KERNEL_TABLE(GemmKernels, kGemm, Isa::Avx2){&kPairsB8, &kSign, &kPairsB8, &kPairsB16};

}  // namespace fixq::gemm_detail::FIXQ_KERNEL_NS(avx2)
