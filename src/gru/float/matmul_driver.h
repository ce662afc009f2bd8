// Private: the loop nest of a family's matmul_nt (gru/float/kernels.h) around its tiles.
//
// The rows of w (the GRU's weights, [n, k] row-major as GruCell holds them) are taken in
// blocks that stay in L2 while every row of a passes over them; inside a block, tiles of
// MR rows of a by JR rows of w each hold MR * JR dot16 accumulators. Every output is one
// tile's dot16 over the whole of k, so the blocking decides the speed, never the sums.
#pragma once

#include <algorithm>
#include <cstdint>

namespace fixq::gru_float {

// Rows of w per block: about 256 KiB of weights (half of the smallest L2 of the CPUs the
// fast families run on), at least 16.
inline int64_t weight_block_rows(int64_t k) { return std::max<int64_t>(16, (int64_t{64} << 10) / std::max<int64_t>(k, 1)); }

// Tiles::run<MR, JR>(a, lda, w, k, out, ldo) computes one tile; Tiles::wide_jr(MR) is the
// widest JR it provides for MR rows, and JR = 1 (and 4 when the widest is more) serve the
// tail of a block. Tiles::kMainRows (4 or 2) is the MR of the main tiles.
template <class Tiles, int MR>
void tile_row(const float* a, int64_t lda, const float* w, int64_t j0, int64_t j1, int64_t k, float* out,
              int64_t ldo) {
  constexpr int kWide = Tiles::wide_jr(MR);
  int64_t j = j0;
  for (; j + kWide <= j1; j += kWide) Tiles::template run<MR, kWide>(a, lda, w + j * k, k, out + j, ldo);
  if constexpr (kWide > 4)
    for (; j + 4 <= j1; j += 4) Tiles::template run<MR, 4>(a, lda, w + j * k, k, out + j, ldo);
  for (; j < j1; ++j) Tiles::template run<MR, 1>(a, lda, w + j * k, k, out + j, ldo);
}

template <class Tiles>
void matmul_nt_blocked(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k, float* out,
                       int64_t ldo) {
  const int64_t block = weight_block_rows(k);
  for (int64_t j0 = 0; j0 < n; j0 += block) {
    const int64_t j1 = std::min(n, j0 + block);
    constexpr int kMain = Tiles::kMainRows;
    static_assert(kMain == 2 || kMain == 4);
    int64_t i = 0;
    for (; i + kMain <= m; i += kMain) tile_row<Tiles, kMain>(a + i * lda, lda, w, j0, j1, k, out + i * ldo, ldo);
    if constexpr (kMain == 4) {
      if (m - i == 3) tile_row<Tiles, 3>(a + i * lda, lda, w, j0, j1, k, out + i * ldo, ldo);
      if (m - i == 2) tile_row<Tiles, 2>(a + i * lda, lda, w, j0, j1, k, out + i * ldo, ldo);
    }
    if (m - i == 1) tile_row<Tiles, 1>(a + i * lda, lda, w, j0, j1, k, out + i * ldo, ldo);
  }
}

}  // namespace fixq::gru_float
