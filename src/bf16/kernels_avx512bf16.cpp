// AVX512_BF16 kernels: vdpbf16ps, whose lane step is fixq/bf16.h's definition itself.
//
// GEMM: a register tile of up to 8 rows of A times one 32-row panel of packed weights (16
// accumulators, two vectors per row): per pair, two panel loads, one dword broadcast of A
// per row and 16 vdpbf16ps. Loops as in BLIS: K in blocks of kKc pairs (the panel's block,
// 16 KB, stays in L1 across the row tiles), rows in blocks of kMc (A's block stays in L2);
// a K block continues from the partial sums stored in C, which is exact (a float32 store
// and load), so each output still steps through its pairs in order.
#include <cstddef>
#include <cstring>

#include "bf16/kernels.h"
#include "cpu/x86.h"

namespace fixq::bf16_detail::FIXQ_KERNEL_NS(avx512bf16) {

namespace {

[[gnu::always_inline]] inline __m512bh as_bh(__m512i v) {
#if defined(FIXQ_EMULATE_X86)
  __m512bh r;
  std::memcpy(&r, &v, sizeof r);
  return r;
#else
  return reinterpret_cast<__m512bh>(v);
#endif
}

[[gnu::always_inline]] inline __m512 dp(__m512 c, __m512i a, __m512i b) { return _mm512_dpbf16_ps(c, as_bh(a), as_bh(b)); }

// 128 elements per step: vector v holds lanes 16v .. 16v + 15.
constexpr int64_t kStep = 2 * kDotLanes;

float dot(const uint16_t* a, const uint16_t* b, int64_t k) {
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
  int64_t i = 0;
  for (; i + kStep <= k; i += kStep) {
    c0 = dp(c0, _mm512_loadu_si512(a + i), _mm512_loadu_si512(b + i));
    c1 = dp(c1, _mm512_loadu_si512(a + i + 32), _mm512_loadu_si512(b + i + 32));
    c2 = dp(c2, _mm512_loadu_si512(a + i + 64), _mm512_loadu_si512(b + i + 64));
    c3 = dp(c3, _mm512_loadu_si512(a + i + 96), _mm512_loadu_si512(b + i + 96));
  }
  if (i < k) {  // masked loads: elements past k are +0 in both operands
    __m512 t[4] = {c0, c1, c2, c3};
    for (int v = 0; v < 4; ++v) {
      const int64_t left = k - i - 32 * v;
      const __mmask32 m = left >= 32 ? ~__mmask32{0} : left <= 0 ? 0 : static_cast<__mmask32>((uint64_t{1} << left) - 1);
      t[v] = dp(t[v], _mm512_maskz_loadu_epi16(m, a + i + 32 * v), _mm512_maskz_loadu_epi16(m, b + i + 32 * v));
    }
    c0 = t[0], c1 = t[1], c2 = t[2], c3 = t[3];
  }
  // Lanes l += l + 32, l + 16 (whole vectors), then + 8, + 4, + 2, + 1 within one.
  const __m512 s16 = _mm512_add_ps(_mm512_add_ps(c0, c2), _mm512_add_ps(c1, c3));
  const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(s16),
                                  _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s16), 1)));
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

constexpr int64_t kKc = 128;  // pairs per K block: a panel block of 16 KB
constexpr int64_t kMc = 192;  // rows per block of A: 192 x 256 bf16 = 96 KB

// Rows [0, MR) x one panel over pairs [p0, p1): starts from zero (first) or from C.
template <int MR>
void tile(const uint16_t* a, int64_t lda, const uint32_t* panel, int64_t p0, int64_t p1, int64_t k, bool first,
          float* c, int64_t ldc, __mmask16 m0, __mmask16 m1) {
  __m512 acc[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m0, c + r * ldc);
    acc[r][1] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m1, c + r * ldc + 16);
  }
  const int64_t full = p1 < k / 2 ? p1 : k / 2;  // pairs whose two elements exist
  int64_t p = p0;
  for (; p < full; ++p) {
    const __m512i b0 = _mm512_loadu_si512(panel + p * kPanel), b1 = _mm512_loadu_si512(panel + p * kPanel + 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      int32_t d;
      std::memcpy(&d, a + r * lda + 2 * p, 4);
      const __m512i ad = _mm512_set1_epi32(d);
      acc[r][0] = dp(acc[r][0], ad, b0);
      acc[r][1] = dp(acc[r][1], ad, b1);
    }
  }
  if (p < p1) {  // odd k: the last pair's second element is +0
    const __m512i b0 = _mm512_loadu_si512(panel + p * kPanel), b1 = _mm512_loadu_si512(panel + p * kPanel + 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512i ad = _mm512_set1_epi32(a[r * lda + 2 * p]);
      acc[r][0] = dp(acc[r][0], ad, b0);
      acc[r][1] = dp(acc[r][1], ad, b1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, m0, acc[r][0]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, acc[r][1]);
  }
}

using TileFn = void (*)(const uint16_t*, int64_t, const uint32_t*, int64_t, int64_t, int64_t, bool, float*, int64_t,
                        __mmask16, __mmask16);
constexpr TileFn kTiles[9] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, tile<7>, tile<8>};

__mmask16 lanes_mask(int64_t n) { return n >= 16 ? __mmask16{0xFFFF} : n <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << n) - 1); }

void gemm(const uint16_t* a, int64_t m, int64_t lda, const uint32_t* packed, int64_t n, int64_t k, float* c,
          int64_t ldc) {
  const int64_t pairs = (k + 1) / 2, panels = (n + kPanel - 1) / kPanel;
  if (pairs == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t p0 = 0; p0 < pairs; p0 += kKc) {
    const int64_t p1 = p0 + kKc < pairs ? p0 + kKc : pairs;
    for (int64_t i0 = 0; i0 < m; i0 += kMc) {
      const int64_t i1 = i0 + kMc < m ? i0 + kMc : m;
      for (int64_t j = 0; j < panels; ++j) {
        const uint32_t* panel = packed + static_cast<std::size_t>(j * pairs * kPanel);
        const __mmask16 m0 = lanes_mask(n - j * kPanel), m1 = lanes_mask(n - j * kPanel - 16);
        for (int64_t i = i0; i < i1; i += 8) {
          const int64_t rows = i1 - i < 8 ? i1 - i : 8;
          kTiles[rows](a + i * lda, lda, panel, p0, p1, k, p0 == 0, c + i * ldc + j * kPanel, ldc, m0, m1);
        }
      }
    }
  }
}

}  // namespace

extern const Bf16Kernels kBf16;
const Bf16Kernels kBf16{dot, gemm};

}  // namespace fixq::bf16_detail::FIXQ_KERNEL_NS(avx512bf16)
