// AVX2 int8 x int8 product for the fast GRU loop: |x| times sign-adjusted weights with
// vpmaddubsw (exact, q_s8_gemm.h), up to 4 activation rows x 2 panels of 8 outputs.
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gru/q_s8_gemm.h"

namespace fixq::gru_detail {

namespace {

// ax holds |x| (same layout as x), so that both operands of a quad are broadcast straight
// from memory and the inner loop's vector ALU work is the four ops per 32 products.
template <int MR, int NP>
void block(const S8Weights& w, int64_t p0, const int8_t* x, const uint8_t* ax, int64_t ldx, int32_t* acc,
           int64_t ldc) {
  const int64_t quads = w.k4 / 4;
  const int8_t* panel = w.data.data() + p0 * quads * 32;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i sum[MR][NP];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NP; ++j) sum[r][j] = _mm256_setzero_si256();
  for (int64_t q = 0; q < quads; ++q) {
    __m256i wv[NP];
    for (int j = 0; j < NP; ++j) wv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + (j * quads + q) * 32));
    for (int r = 0; r < MR; ++r) {
      int32_t four, four_abs;
      std::memcpy(&four, x + r * ldx + 4 * q, sizeof four);
      std::memcpy(&four_abs, ax + r * ldx + 4 * q, sizeof four_abs);
      const __m256i sx = _mm256_set1_epi32(four), a = _mm256_set1_epi32(four_abs);
      for (int j = 0; j < NP; ++j)
        sum[r][j] = _mm256_add_epi32(sum[r][j], _mm256_madd_epi16(_mm256_maddubs_epi16(a, _mm256_sign_epi8(wv[j], sx)), ones));
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NP; ++j) {
      const int64_t n0 = (p0 + j) * 8, count = std::min<int64_t>(8, w.n - n0);
      int32_t* out = acc + r * ldc + n0;
      if (count == 8) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), sum[r][j]);
      } else {
        alignas(32) int32_t tmp[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), sum[r][j]);
        std::memcpy(out, tmp, static_cast<size_t>(count) * sizeof(int32_t));
      }
    }
}

// Panels [p0, p1) for one group of MR rows.
// Few rows leave registers for four panels at a time.
template <int MR>
void rows(const S8Weights& w, int64_t p0, int64_t p1, const int8_t* x, const uint8_t* ax, int64_t ldx, int32_t* acc,
          int64_t ldc) {
  int64_t p = p0;
  if constexpr (MR <= 2)
    for (; p + 4 <= p1; p += 4) block<MR, 4>(w, p, x, ax, ldx, acc, ldc);
  for (; p + 2 <= p1; p += 2) block<MR, 2>(w, p, x, ax, ldx, acc, ldc);
  if (p < p1) block<MR, 1>(w, p, x, ax, ldx, acc, ldc);
}

// Weight bytes per chunk of panels that all row groups pass over while it stays in L2.
constexpr int64_t kChunkBytes = 128 * 1024;

}  // namespace

void s8_gemm_avx2(const S8Weights& w, const int8_t* x, int64_t ldx, int64_t nrows, int32_t* acc, int64_t ldc) {
  thread_local std::vector<uint8_t> abs_x;
  if (abs_x.size() < static_cast<size_t>(nrows * ldx)) abs_x.resize(static_cast<size_t>(nrows * ldx));
  for (int64_t i = 0; i < nrows * ldx; i += 32) {
    if (i + 32 <= nrows * ldx) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(abs_x.data() + i), _mm256_abs_epi8(v));
    } else {
      for (int64_t j = i; j < nrows * ldx; ++j) abs_x[static_cast<size_t>(j)] = static_cast<uint8_t>(std::abs(int{x[j]}));
    }
  }
  const uint8_t* ax = abs_x.data();
  const int64_t chunk = std::max<int64_t>(4, kChunkBytes / (w.k4 * 8) / 4 * 4);
  for (int64_t p0 = 0; p0 < w.panels; p0 += chunk) {
    const int64_t p1 = std::min(w.panels, p0 + chunk);
    int64_t m = 0;
    for (; m + 4 <= nrows; m += 4) rows<4>(w, p0, p1, x + m * ldx, ax + m * ldx, ldx, acc + m * ldc, ldc);
    switch (nrows - m) {
      case 3: rows<3>(w, p0, p1, x + m * ldx, ax + m * ldx, ldx, acc + m * ldc, ldc); break;
      case 2: rows<2>(w, p0, p1, x + m * ldx, ax + m * ldx, ldx, acc + m * ldc, ldc); break;
      case 1: rows<1>(w, p0, p1, x + m * ldx, ax + m * ldx, ldx, acc + m * ldc, ldc); break;
      default: break;
    }
  }
  for (int64_t r = 0; r < nrows; ++r)
    for (const auto& [n, k] : w.minus128) acc[r * ldc + n] -= x[r * ldx + k];
}

}  // namespace fixq::gru_detail
