// Private, for the gru/float/kernels_<family>.cpp files only: the float GRU's kernels
// (gru/float/kernels.h) written once over a family's lane primitives L (src/simd/lanes_<family>.h):
//   matmul: register tiles of outputs, L::kLanes consecutive outputs per vector: per k, a
//           k-row of the packed weights is loaded and each row of a broadcasts its value,
//           one fused multiply-add per vector, so every lane runs its output's chains in the
//           definition's order with no reduction across lanes;
//   gates:  the unit update L::kLanes units per vector, the last ones under a lane mask,
//           its multiply-adds fused where the definition fuses them (gru/float/math.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "gru/float/kernels.h"
#include "gru/float/math.h"

namespace fixq::gru_float {

template <class L>
struct FloatGruLanes {
  using F = typename L::F;
  static constexpr int N = L::kLanes;
  // Accumulators a tile keeps in registers, the rest of the registers for the weights'
  // vectors and the broadcast value: 24 of AVX-512's 32, 12 of AVX2's 16.
  static constexpr int kAccumulators = L::kRegisters * 3 / 4;
  // A tile of many rows: four vectors of columns (a panel's k-row of 64 floats with
  // AVX-512, half of one with AVX2) by 6 or 3 rows of a. Per k it loads four weight
  // vectors and broadcasts one value of a per row: 10 loads for 24 FMAs (AVX-512).
  static constexpr int kTileVectors = 4;
  static constexpr int kTileRows = kAccumulators / kTileVectors;
  // The one-row tile (the recurrent product at batch 1): 8 vectors, enough independent
  // chains to cover the FMA latency while the weights stream from L2 or L3.
  static constexpr int kRowVectors = 8;
  static_assert(kPanel % (kTileVectors * N) == 0 && (kRowVectors * N) % kPanel == 0);

  static constexpr int kPanelVectors = kPanel / N;

  // out[r * ldo + c] for the MR rows of a and NV vectors of columns of the packed weights,
  // of which the first `cols` are stored: vector v at w + (v / kPanelVectors) panel_stride
  // + (v % kPanelVectors) N in each k-row. Each output's chains are one register's lane;
  // the chains' sums go to `sum` (L1) at the end of each block of kFmaChain k. With
  // Prefetch, the same vectors of `pf` (another tile's weights) are prefetched into L2.
  template <int MR, int NV, bool Prefetch>
  static void tile(const float* a, int64_t lda, const float* w, int64_t panel_stride, int64_t k, int64_t cols,
                   float* out, int64_t ldo, const float* pf) {
    const auto at = [&](const float* base, int v) {
      return base + v / kPanelVectors * panel_stride + v % kPanelVectors * N;
    };
    alignas(64) float sum[MR][NV * N];
    for (auto& row : sum)  // the sum of no chains, k = 0
      for (int v = 0; v < NV; ++v) L::fstore(row + v * N, L::fzero());
    for (int64_t kb = 0; kb < k; kb += kFmaChain) {
      const int64_t ke = std::min(k, kb + kFmaChain);
      F acc[MR][NV];
      for (auto& row : acc)
        for (F& v : row) v = L::fzero();
      for (int64_t i = kb; i < ke; ++i) {
        F wv[NV];
        for (int v = 0; v < NV; ++v) wv[v] = L::fload(at(w, v) + i * kPanel);
        if constexpr (Prefetch)
          for (int v = 0; v < NV; ++v) L::prefetch_l2(at(pf, v) + i * kPanel);
        for (int r = 0; r < MR; ++r) {
          const F av = L::fsplat(a[r * lda + i]);
          for (int v = 0; v < NV; ++v) acc[r][v] = L::ffma(av, wv[v], acc[r][v]);
        }
      }
      for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NV; ++v)
          L::fstore(sum[r] + v * N, kb == 0 ? acc[r][v] : L::fadd(L::fload(sum[r] + v * N), acc[r][v]));
    }
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV && v * N < cols; ++v)
        L::fstore_n(out + r * ldo + v * N, cols - v * N, L::fload(sum[r] + v * N));
  }

  // Rows [0, m) of a over one tile's columns by tiles of MR rows, the last one smaller.
  // With Prefetch, only the first row tile prefetches: the next column's weights are then in
  // L2, and repeating the prefetches in every row tile only took load slots (on the AMX Xeon
  // of docs/performance.md, the products of 16 and 1600 rows ran 0-12% faster without them,
  // H = 128-1024).
  template <int MR, int NV, bool Prefetch>
  static void column_tile(const float* a, int64_t lda, int64_t m, const float* w, int64_t panel_stride, int64_t k,
                          int64_t cols, float* out, int64_t ldo, const float* pf) {
    int64_t i = 0;
    if constexpr (Prefetch) {
      if (m >= MR) {
        tile<MR, NV, true>(a, lda, w, panel_stride, k, cols, out, ldo, pf);
        column_tile<MR, NV, false>(a + MR * lda, lda, m - MR, w, panel_stride, k, cols, out + MR * ldo, ldo, nullptr);
        return;
      }
    }
    for (; i + MR <= m; i += MR)
      tile<MR, NV, Prefetch>(a + i * lda, lda, w, panel_stride, k, cols, out + i * ldo, ldo, pf);
    if constexpr (MR > 1)
      if (i < m)
        column_tile<MR - 1, NV, Prefetch>(a + i * lda, lda, m - i, w, panel_stride, k, cols, out + i * ldo, ldo, pf);
  }

  static void matmul(const float* a, int64_t lda, int64_t m, const float* packed, int64_t n, int64_t k, float* out,
                     int64_t ldo, bool reverse_columns) {
    if (k == 0) {  // every dot is the empty chain's +0, and `packed` may be null (no offset from it then)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) out[i * ldo + j] = 0.0f;
      return;
    }
    const int64_t padded = (n + kPanel - 1) / kPanel * kPanel, stride = k * kPanel;
    // Where column c's vector lies in the k-row 0 of its panel.
    const auto column = [&](int64_t c) { return packed + c / kPanel * stride + c % kPanel; };
    // The one-row tile streams each weight once, at what L2 or L3 deliver; a prefetch
    // would only take load slots. Its blocks of kRowVectors vectors cover [0, row_end).
    constexpr int64_t kRowCols = kRowVectors * N, kTileCols = kTileVectors * N;
    const int64_t row_end = m == 1 ? padded / kRowCols * kRowCols : 0;
    const auto row_block = [&](int64_t col) {
      tile<1, kRowVectors, false>(a, lda, column(col), stride, k, std::min<int64_t>(n - col, kRowCols), out + col, ldo,
                                  nullptr);
    };
    // Columns outer, rows inner: a tile's weights come from L3 for its first row tile and
    // from L1 or L2 for the others. Each tile prefetches the next column's weights (in the
    // order of this call) into L2, so that their stream from L3 runs beside the arithmetic
    // instead of before it.
    const auto tile_block = [&](int64_t col, int64_t next) {
      const int64_t cols = std::min<int64_t>(n - col, kTileCols);
      if (m > 1 && next >= 0 && next + kTileCols <= padded)
        column_tile<kTileRows, kTileVectors, true>(a, lda, m, column(col), stride, k, cols, out + col, ldo, column(next));
      else
        column_tile<kTileRows, kTileVectors, false>(a, lda, m, column(col), stride, k, cols, out + col, ldo, nullptr);
    };
    if (!reverse_columns) {
      for (int64_t col = 0; col < row_end; col += kRowCols) row_block(col);
      for (int64_t col = row_end; col < n; col += kTileCols) tile_block(col, col + kTileCols);
      return;
    }
    const int64_t last = row_end + (n - row_end - 1) / kTileCols * kTileCols;  // the last tile block's column
    for (int64_t col = last; col >= row_end && col < n; col -= kTileCols) tile_block(col, col - kTileCols);
    for (int64_t col = row_end - kRowCols; col >= 0; col -= kRowCols) row_block(col);
  }

  // The packed layout, kLanes rows by kLanes k at a time: their row chunks loaded (zeros past
  // row n and past k), transposed in registers, and stored as kLanes k-rows of the panel
  // (one cache line each with AVX-512, half of one with AVX2). A panel's k-rows are written
  // in order, each whole before the next: 1.3-1.6x faster than a group of rows at a time
  // where rows lie 4 KiB apart (H = 1024).
  static void pack(const float* w, int64_t n, int64_t k, float* packed) {
    for (int64_t p0 = 0; p0 < n; p0 += kPanel) {
      float* panel = packed + p0 / kPanel * k * kPanel;
      for (int64_t i = 0; i < k; i += N) {
        const int64_t ks = std::min<int64_t>(N, k - i);
        for (int64_t g = 0; g < kPanel; g += N) {
          const int64_t rows = std::clamp<int64_t>(n - p0 - g, 0, N);
          F v[N];
          for (int r = 0; r < N; ++r) v[r] = r < rows ? L::fload_n(w + (p0 + g + r) * k + i, ks) : L::fzero();
          L::ftranspose(v);
          for (int c = 0; c < ks; ++c) L::fstore(panel + (i + c) * kPanel + g, v[c]);
        }
      }
    }
  }

  // unit_update's operations (gru/float/math.h) on L's float lanes.
  struct Ops {
    using V = F;
    static V splat(float v) { return L::fsplat(v); }
    static V add(V a, V b) { return L::fadd(a, b); }
    static V sub(V a, V b) { return L::fsub(a, b); }
    static V mul(V a, V b) { return L::fmul(a, b); }
    static V fma(V a, V b, V c) { return L::ffma(a, b, c); }
    static V div(V a, V b) { return L::fdiv(a, b); }
    static V neg(V a) { return L::from_bits(L::bit_xor(L::bits(a), L::splat(INT32_MIN))); }
    static V abs(V a) { return L::from_bits(L::bit_and(L::bits(a), L::splat(INT32_MAX))); }
    static V copy_sign(V a, V s) {
      return L::from_bits(L::bit_or(L::bit_and(L::bits(a), L::splat(INT32_MAX)), L::bit_and(L::bits(s), L::splat(INT32_MIN))));
    }
    static V max(V a, V b) { return L::fmax(a, b); }
    static V min(V a, V b) { return L::fmin(a, b); }
    static auto less(V a, V b) { return L::fless(a, b); }
    static auto is_nan(V a) { return L::fnan(a); }
    static V select(typename L::M m, V a, V b) { return L::fselect(m, a, b); }
    static V pow2(typename L::I e) { return L::from_bits(L::template slli<23>(L::add(e, L::splat(127)))); }
    static V pow2_half_floor(V n) { return pow2(L::template srai<1>(L::truncate(n))); }
    static V pow2_half_ceil(V n) {
      const auto i = L::truncate(n);
      return pow2(L::sub(i, L::template srai<1>(i)));
    }
  };

  static void gates(const GateArgs& g) {
    const Ops o;
    const int64_t H = g.H;
    for_each_gate_row(g, [&](const float* wx, const float* rh, float* h, int64_t b) {
      for (int64_t j = 0; j < H; j += L::kLanes) {
        // The last vector's lanes past H compute on zeros and are not stored.
        auto ld = [&](const float* p) { return L::fload_n(p + j, H - j); };
        auto st = [&](float* p, F v) { L::fstore_n(p + j, H - j, v); };
        const UnitValues<Ops> u = unit_update(o, ld(wx), ld(wx + H), ld(wx + 2 * H), ld(rh), ld(rh + H), ld(rh + 2 * H),
                                              ld(g.bx), ld(g.bx + H), ld(g.bx + 2 * H), ld(g.br), ld(g.br + H),
                                              ld(g.br + 2 * H), ld(h));
        st(h, u.h);
        if (g.all) each_gate_intermediate(u, [&](int op, F v) { st(g.all[op] + b * H, v); });
      }
    });
  }

};

}  // namespace fixq::gru_float
