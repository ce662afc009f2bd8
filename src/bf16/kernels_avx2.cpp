// AVX2 + FMA bf16 kernels: each VDPBF16PS lane step as two vfmadd231ps, the odd elements'
// product first, with MXCSR's DAZ and FTZ bits set for the duration of the steps (x86's
// FTZ flushes results that are subnormal after rounding, as the instruction does). The
// folding sums of dot() run after MXCSR is restored: they are plain float additions.
#include <cstddef>
#include <cstring>

#include "bf16/kernels.h"
#include "cpu/x86.h"

namespace fixq::bf16_detail::avx2 {

namespace {

constexpr unsigned kDazFtz = 0x8040;  // MXCSR bits 15 (FTZ) and 6 (DAZ)

// Sets DAZ and FTZ while alive; the caller's MXCSR comes back after.
class FlushDenormals {
 public:
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kDazFtz); }
  ~FlushDenormals() { _mm_setcsr(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_;
};

// The odd (upper) and even (lower) bf16 of each dword as float32.
[[gnu::always_inline]] inline __m256 odd_half(__m256i v) {
  return _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
}
[[gnu::always_inline]] inline __m256 even_half(__m256i v) { return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)); }

// One vdpbf16ps on 8 lanes.
[[gnu::always_inline]] inline __m256 dp8(__m256 c, __m256i a, __m256i b) {
  c = _mm256_fmadd_ps(odd_half(a), odd_half(b), c);
  return _mm256_fmadd_ps(even_half(a), even_half(b), c);
}

// 128 elements (64 pairs) per step: ymm i holds lanes 8i .. 8i + 7.
constexpr int64_t kStep = 2 * kDotLanes;

float dot(const uint16_t* a, const uint16_t* b, int64_t k) {
  __m256 c[8];
  for (auto& v : c) v = _mm256_setzero_ps();
  {
    FlushDenormals flush;
    int64_t i = 0;
    for (; i + kStep <= k; i += kStep) {
#pragma GCC unroll 8
      for (int v = 0; v < 8; ++v)
        c[v] = dp8(c[v], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 16 * v)),
                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 16 * v)));
    }
    if (i < k) {  // the tail, zero-padded in both operands
      alignas(32) uint16_t ta[kStep] = {}, tb[kStep] = {};
      std::memcpy(ta, a + i, static_cast<std::size_t>(k - i) * 2);
      std::memcpy(tb, b + i, static_cast<std::size_t>(k - i) * 2);
#pragma GCC unroll 8
      for (int v = 0; v < 8; ++v)
        c[v] = dp8(c[v], _mm256_load_si256(reinterpret_cast<const __m256i*>(ta + 16 * v)),
                   _mm256_load_si256(reinterpret_cast<const __m256i*>(tb + 16 * v)));
    }
  }
  // Lanes l += l + 32, l + 16, l + 8 (whole vectors), then + 4, + 2, + 1 within one.
  for (int v = 0; v < 4; ++v) c[v] = _mm256_add_ps(c[v], c[v + 4]);
  for (int v = 0; v < 2; ++v) c[v] = _mm256_add_ps(c[v], c[v + 2]);
  const __m256 s8 = _mm256_add_ps(c[0], c[1]);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// The dword of A's row r at pair p (the last one zero-padded for odd k).
[[gnu::always_inline]] inline uint32_t a_pair(const uint16_t* row, int64_t k, int64_t p) {
  if (2 * p + 1 < k) {
    uint32_t d;
    std::memcpy(&d, row + 2 * p, 4);
    return d;
  }
  return row[2 * p];
}

// Strip s of 16 columns (half of a packed panel): its first dword.
const uint32_t* strip_at(const uint32_t* packed, int64_t pairs, int64_t s) {
  const int64_t j = 16 * s;
  return packed + static_cast<std::size_t>(j / kPanel * pairs * kPanel + j % kPanel);
}

// Rows [0, MR) x NS strips from strip s0, all pairs. Each row has two accumulators per
// strip, each a chain of two FMAs per pair: one row over one strip waited on those chains
// (a GEMV ran at 15 GFLOP/s on Zen 5, FMA latency bound), so one or two rows take four or
// two strips at once, eight chains like four rows over one strip.
template <int MR, int NS>
void tile(const uint16_t* a, int64_t lda, const uint32_t* packed, int64_t pairs, int64_t k, int64_t s0, int64_t n,
          float* c, int64_t ldc) {
  __m256 acc[MR][NS][2];
  const uint32_t* strip[NS];
  for (int s = 0; s < NS; ++s) strip[s] = strip_at(packed, pairs, s0 + s);
  for (auto& r : acc)
    for (auto& v : r) v[0] = v[1] = _mm256_setzero_ps();
  {
    FlushDenormals flush;
    for (int64_t p = 0; p < pairs; ++p) {
      __m256 bo[NS][2], be[NS][2];
#pragma GCC unroll 4
      for (int s = 0; s < NS; ++s) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(strip[s] + p * kPanel));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(strip[s] + p * kPanel + 8));
        bo[s][0] = odd_half(b0), bo[s][1] = odd_half(b1), be[s][0] = even_half(b0), be[s][1] = even_half(b1);
      }
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        const __m256i ad = _mm256_set1_epi32(static_cast<int>(a_pair(a + r * lda, k, p)));
        const __m256 ao = odd_half(ad), ae = even_half(ad);
#pragma GCC unroll 4
        for (int s = 0; s < NS; ++s) {  // per accumulator: the odd product, then the even one
          acc[r][s][0] = _mm256_fmadd_ps(ao, bo[s][0], acc[r][s][0]);
          acc[r][s][1] = _mm256_fmadd_ps(ao, bo[s][1], acc[r][s][1]);
          acc[r][s][0] = _mm256_fmadd_ps(ae, be[s][0], acc[r][s][0]);
          acc[r][s][1] = _mm256_fmadd_ps(ae, be[s][1], acc[r][s][1]);
        }
      }
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int s = 0; s < NS; ++s) {
      const int64_t j = 16 * (s0 + s);
      alignas(32) float out[16];
      _mm256_store_ps(out, acc[r][s][0]);
      _mm256_store_ps(out + 8, acc[r][s][1]);
      std::memcpy(c + r * ldc + j, out, static_cast<std::size_t>(n - j < 16 ? n - j : 16) * sizeof(float));
    }
}

void gemm(const uint16_t* a, int64_t m, int64_t lda, const uint32_t* packed, int64_t n, int64_t k, float* c,
          int64_t ldc) {
  const int64_t pairs = (k + 1) / 2, strips = (n + 15) / 16, m4 = m / 4 * 4;
  for (int64_t s = 0; s < strips; ++s) {
    for (int64_t i = 0; i < m4; i += 4) tile<4, 1>(a + i * lda, lda, packed, pairs, k, s, n, c + i * ldc, ldc);
    if (m - m4 == 3) tile<3, 1>(a + m4 * lda, lda, packed, pairs, k, s, n, c + m4 * ldc, ldc);
  }
  const uint16_t* ar = a + m4 * lda;
  float* cr = c + m4 * ldc;
  if (m - m4 == 2) {
    int64_t s = 0;
    for (; s + 2 <= strips; s += 2) tile<2, 2>(ar, lda, packed, pairs, k, s, n, cr, ldc);
    if (s < strips) tile<2, 1>(ar, lda, packed, pairs, k, s, n, cr, ldc);
  } else if (m - m4 == 1) {
    int64_t s = 0;
    for (; s + 4 <= strips; s += 4) tile<1, 4>(ar, lda, packed, pairs, k, s, n, cr, ldc);
    switch (strips - s) {
      case 3: tile<1, 3>(ar, lda, packed, pairs, k, s, n, cr, ldc); break;
      case 2: tile<1, 2>(ar, lda, packed, pairs, k, s, n, cr, ldc); break;
      case 1: tile<1, 1>(ar, lda, packed, pairs, k, s, n, cr, ldc); break;
      default: break;
    }
  }
}

}  // namespace

FIXQ_KERNEL_TABLE(Bf16Kernels, kBf16, Isa::Avx2){dot, gemm};

}  // namespace fixq::bf16_detail::avx2
