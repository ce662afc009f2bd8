// The AVX2 + FMA weight-only matmul kernel (the 2/4/8-bit-weight, 16-bit-activation GEMM of
// GPTQ-style kernels, on a CPU). Codes are unpacked with a shift and a mask, the zero point
// subtracted in int32 and the difference converted to float (exact); per group and column
// the sum of x[k] * (q - z) runs in row order, then one FMA adds sum * scale to y, group
// after group: the scalar kernel's order, so fixq/packed.h's error bound holds (FMA only
// removes roundings). Two schedules:
//   M < 8:  each packed word row is loaded once and unpacked in registers for one row of x
//           against a whole 32-column panel (four accumulators: enough independent FMA
//           chains at M = 1, where reading 8x fewer bytes than float32 is the point) or up
//           to four rows against half a panel;
//   M >= 8: each group of a panel is unpacked once into an L1 tile of floats, which a 6 x 16
//           register tile of FMAs then reuses for every row of x.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "packed/layout.h"

namespace fixq::packed_detail {

namespace {

// From this many rows of x on, unpacking each group once into a tile (second schedule)
// beats unpacking it again for every four rows.
constexpr int64_t kUnpackRows = 8;

// y[i, c0 + 0 .. 8 * NV) for i < MR, from canonical x rows x + i * w.k.
template <int Bits, int MR, int NV>
void tile(const float* x, const View& w, int64_t p, int c0, float (*out)[kPanel]) {
  constexpr int per = 32 / Bits;
  const __m256i mask = _mm256_set1_epi32((1 << Bits) - 1);
  const int64_t rows_per_group = w.group_size / per;
  __m256 y[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) y[i][v] = _mm256_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    const int64_t param = g * w.padded_cols() + p * kPanel + c0;
    __m256i z[NV];
    for (int v = 0; v < NV; ++v) z[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.zeros + param + 8 * v));
    __m256 acc[MR][NV];
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
    const uint32_t* words = w.words + (p * w.word_rows() + g * rows_per_group) * kPanel + c0;
    const float* xk = x + g * w.group_size;
    for (int64_t r = 0; r < rows_per_group; ++r, words += kPanel, xk += per) {
      __m256i packed[NV];
      for (int v = 0; v < NV; ++v) packed[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + 8 * v));
#pragma GCC unroll 16
      for (int j = 0; j < per; ++j) {
        __m256 d[NV];
        for (int v = 0; v < NV; ++v) {
          __m256i q = _mm256_srli_epi32(packed[v], j * Bits);
          if (j + 1 < per) q = _mm256_and_si256(q, mask);  // the top field has nothing above it
          d[v] = _mm256_cvtepi32_ps(_mm256_sub_epi32(q, z[v]));
        }
        for (int i = 0; i < MR; ++i) {
          const __m256 xb = _mm256_broadcast_ss(xk + i * w.k + j);
          for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(xb, d[v], acc[i][v]);
        }
      }
    }
    for (int v = 0; v < NV; ++v) {
      const __m256 s = _mm256_loadu_ps(w.scales + param + 8 * v);
      for (int i = 0; i < MR; ++i) y[i][v] = _mm256_fmadd_ps(acc[i][v], s, y[i][v]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(out[i] + c0 + 8 * v, y[i][v]);
}

// MR rows of x against panel p, into out[MR][32].
template <int Bits, int MR>
void panel(const float* x, const View& w, int64_t p, float (*out)[kPanel]) {
  if constexpr (MR == 1) {
    tile<Bits, 1, 4>(x, w, p, 0, out);
  } else {
    tile<Bits, MR, 2>(x, w, p, 0, out);
    tile<Bits, MR, 2>(x, w, p, 16, out);
  }
}

// The codes of group g of panel p as exact floats q - z, row-major [group_size][32] (16 KB
// for groups of 128: it stays in L1 while every row of x uses it).
template <int Bits>
void unpack_group(const View& w, int64_t p, int64_t g, float* d) {
  constexpr int per = 32 / Bits;
  const __m256i mask = _mm256_set1_epi32((1 << Bits) - 1);
  const int64_t param = g * w.padded_cols() + p * kPanel;
  __m256i z[4];
  for (int v = 0; v < 4; ++v) z[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.zeros + param + 8 * v));
  const int64_t rows_per_group = w.group_size / per;
  const uint32_t* words = w.words + (p * w.word_rows() + g * rows_per_group) * kPanel;
  for (int64_t r = 0; r < rows_per_group; ++r, words += kPanel) {
    for (int v = 0; v < 4; ++v) {
      const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + 8 * v));
#pragma GCC unroll 16
      for (int j = 0; j < per; ++j) {
        __m256i q = _mm256_srli_epi32(packed, j * Bits);
        if (j + 1 < per) q = _mm256_and_si256(q, mask);
        _mm256_storeu_ps(d + (r * per + j) * kPanel + 8 * v, _mm256_cvtepi32_ps(_mm256_sub_epi32(q, z[v])));
      }
    }
  }
}

// MR rows of x (from the group's first column) against half (16 columns from c0) of an
// unpacked group tile d: the group's sums in row order, then out[i] += sum * scale, as
// tile() does. Twelve accumulators at MR = 6: two tile loads and six broadcasts feed
// twelve FMAs, so the FMA units, not the loads, set the pace.
template <int MR>
void tile_from_unpacked(const float* x, int64_t ldx, const float* d, int64_t rows, const float* scales, int c0,
                        float* out) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  d += c0;
  for (int64_t k = 0; k < rows; ++k, d += kPanel) {
    const __m256 d0 = _mm256_loadu_ps(d), d1 = _mm256_loadu_ps(d + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256 xb = _mm256_broadcast_ss(x + i * ldx + k);
      acc[i][0] = _mm256_fmadd_ps(xb, d0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(xb, d1, acc[i][1]);
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    const __m256 s = _mm256_loadu_ps(scales + c0 + 8 * v);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      float* o = out + i * kPanel + c0 + 8 * v;
      _mm256_storeu_ps(o, _mm256_fmadd_ps(acc[i][v], s, _mm256_loadu_ps(o)));
    }
  }
}

// Rows [i, i + rows) of x, rows <= 6, against one unpacked group tile.
void rows_from_unpacked(const float* x, int64_t ldx, int64_t rows, const float* d, int64_t k, const float* scales,
                        float* out) {
  for (const int c0 : {0, 16}) {
    switch (rows) {
      case 6: tile_from_unpacked<6>(x, ldx, d, k, scales, c0, out); break;
      case 5: tile_from_unpacked<5>(x, ldx, d, k, scales, c0, out); break;
      case 4: tile_from_unpacked<4>(x, ldx, d, k, scales, c0, out); break;
      case 3: tile_from_unpacked<3>(x, ldx, d, k, scales, c0, out); break;
      case 2: tile_from_unpacked<2>(x, ldx, d, k, scales, c0, out); break;
      default: tile_from_unpacked<1>(x, ldx, d, k, scales, c0, out); break;
    }
  }
}

template <int Bits>
void matmul_unpacked(const float* x, int64_t m, const View& w, float* y) {
  std::vector<float> d(static_cast<size_t>(w.group_size * kPanel));
  std::vector<float> out(static_cast<size_t>(m * kPanel));
  for (int64_t p = 0; p < w.panels; ++p) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (int64_t g = 0; g < w.groups; ++g) {
      unpack_group<Bits>(w, p, g, d.data());
      const float* scales = w.scales + g * w.padded_cols() + p * kPanel;
      for (int64_t i = 0; i < m; i += 6)
        rows_from_unpacked(x + i * w.k + g * w.group_size, w.k, std::min<int64_t>(6, m - i), d.data(), w.group_size,
                           scales, out.data() + i * kPanel);
    }
    const int64_t cols = std::min(kPanel, w.n - p * kPanel);
    for (int64_t i = 0; i < m; ++i) std::copy(out.data() + i * kPanel, out.data() + i * kPanel + cols, y + i * w.n + p * kPanel);
  }
}

template <int Bits>
void matmul(const float* x, int64_t m, const View& w, float* y) {
  if (m >= kUnpackRows) {
    matmul_unpacked<Bits>(x, m, w, y);
    return;
  }
  float out[4][kPanel];
  for (int64_t p = 0; p < w.panels; ++p) {
    const int64_t cols = std::min(kPanel, w.n - p * kPanel);
    for (int64_t i = 0; i < m;) {
      const int64_t rows = std::min<int64_t>(4, m - i);
      const float* xi = x + i * w.k;
      switch (rows) {
        case 4: panel<Bits, 4>(xi, w, p, out); break;
        case 3: panel<Bits, 3>(xi, w, p, out); break;
        case 2: panel<Bits, 2>(xi, w, p, out); break;
        default: panel<Bits, 1>(xi, w, p, out); break;
      }
      for (int64_t r = 0; r < rows; ++r) std::copy(out[r], out[r] + cols, y + (i + r) * w.n + p * kPanel);
      i += rows;
    }
  }
}

void dispatch(const float* x, int64_t m, const View& w, float* y) {
  switch (w.bits) {
    case 2: matmul<2>(x, m, w, y); break;
    case 4: matmul<4>(x, m, w, y); break;
    default: matmul<8>(x, m, w, y); break;
  }
}

}  // namespace

namespace avx2 {
extern const PackedKernels kPacked;
const PackedKernels kPacked{dispatch};
}  // namespace avx2

}  // namespace fixq::packed_detail
