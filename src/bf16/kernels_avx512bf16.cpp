// AVX512_BF16 kernels: vdpbf16ps, whose lane step is fixq/bf16.h's definition itself.
//
// GEMM: a register tile of up to 6 rows of A times two 32-row panels of packed weights (24
// accumulators, four vectors per row): per pair, four panel loads, one dword broadcast of
// A per row and 24 vdpbf16ps. Loops as in BLIS: K in blocks of kKc pairs, rows in blocks of
// kMc (A's block packed contiguous per tile), both blocks kept in L2;
// a K block continues from the partial sums stored in C, which is exact (a float32 store
// and load), so each output still steps through its pairs in order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
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

// Each K block loads and stores every output once, so K blocks are as long as the caches
// allow: two panels' block (128 KB) and A's block (384 KB) stay in L2 across the row
// tiles. Measured on Zen 5 (1 MB L2), 2048^3 with the 8 x 32 tile: K blocks of 128 pairs
// 224 GFLOPS, 256 pairs ~290, 512 pairs ~320.
// A K of up to kKcWhole pairs is one block (no pass of C in between; A's block then holds
// kMcWhole rows so that it and two panels' block, 784 KB, share L2); a longer K takes
// blocks of kKc pairs and kMc rows. Measured on Zen 5, alternated runs: 2048^3 0.94-0.98x
// oneDNN with 512-pair blocks, 1.02-1.03x as one block; 128 x 4096^2 1.00-1.04x with
// 512-pair blocks, 0.99-1.00x with 1024.
constexpr int64_t kKc = 512, kMc = 192;             // pairs and rows per block (kMc: a multiple of kMr)
constexpr int64_t kKcWhole = 1024, kMcWhole = 132;
constexpr int64_t kMr = 6;    // rows per register tile
// A few rows (a GEMV and its neighbours, up to kStreamRows) read each weight once per row
// tile, from memory. Such a GEMM streams: its first row tile reads the two panels as two
// sequential streams fetched kStreamAhead bytes ahead (tile<..., true>), the others find
// them in L2; K goes in one block of up to kKcStream pairs for a single row tile (the
// whole K of any usual layer: no pass of C in between), kKcWhole for more. Measured on
// Zen 5 against the blocked form (next block's slice prefetched), both in one process,
// N = K = 4096 (32 MB of weights): M = 1 36 -> 49 GFLOP/s (a plain read of the 32 MB:
// 42-43 GB/s), M = 6 165 -> 274, M = 12 236 -> 311, M = 13 202 -> 246, M = 16 289 -> 332;
// 16 x 3072 x 1024 unchanged. Four panels at once ran slower (22-34 at M = 1: too many
// streams), and four row tiles too (M = 24: 0.9x).
constexpr int64_t kStreamRows = 3 * kMr;
constexpr int64_t kKcStream = 1 << 16;
constexpr uintptr_t kStreamAhead = 4096;

// Rows [0, MR) x NP adjacent panels (32 or 64 columns) over the block's pairs [0, pairs):
// starts from zero (first) or from C. 6 x 64 holds 24 accumulators: per pair four panel
// loads and six broadcasts feed 24 vdpbf16ps (the 8 x 32 tile fed 16 with ten loads and
// reached ~80% of the vdpbf16ps peak). a holds the tile's rows packed by pack_a_block:
// pair q of row r at a[q * kMr + r]. next_c, the output tile the driver runs next (or
// null), is prefetched first: output rows lie ldc apart and miss the caches (at 2048^3
// the loads of C were a quarter of the time). m[v]: the real lanes of column vector v.
// pf: one 64-byte line per pair to fetch into L2 on the way, a slice of the weights the
// driver runs next (weights streamed from memory stalled the first row tile of each
// block: 128 x 4096 x 4096 ran at 0.84x oneDNN against 0.96x at 2048^3). Ahead: the
// streaming form (a few rows, gemm below), which ignores pf and fetches the tile's own
// panels kStreamAhead bytes ahead instead, both lines of each panel's pair.
template <int MR, int NP, bool Ahead>
void tile(const uint32_t* a, const uint32_t* panel, int64_t panel_stride, int64_t pairs, bool first, float* c,
          int64_t ldc, const __mmask16* m, const float* next_c, const char* pf) {
  // Addresses formed as integers: the last lines of a narrow last panel may lie past the
  // output, which a prefetch may touch but pointer arithmetic may not reach.
  if (next_c != nullptr)
    for (int r = 0; r < kMr; ++r) {
      const uintptr_t row = reinterpret_cast<uintptr_t>(next_c) + sizeof(float) * static_cast<uintptr_t>(r * ldc);
      for (int l = 0; l < 2 * NP; ++l) _mm_prefetch(reinterpret_cast<const char*>(row + 64 * l), _MM_HINT_T0);
    }
  constexpr int kV = 2 * NP;  // column vectors
  __m512 acc[MR][kV];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v)  // columns past a narrow last panel: no address formed
      acc[r][v] = first || m[v] == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m[v], c + r * ldc + 16 * v);
  const auto panel_at = reinterpret_cast<uintptr_t>(panel) + kStreamAhead;
  for (int64_t q = 0; q < pairs; ++q) {
    if constexpr (!Ahead) {
      _mm_prefetch(pf + 64 * q, _MM_HINT_T1);
    } else {
#pragma GCC unroll 2
      for (int p = 0; p < NP; ++p) {  // the panel's pair: 128 bytes, two lines
        const uintptr_t line = panel_at + sizeof(uint32_t) * static_cast<uintptr_t>(p * panel_stride + q * kPanel);
        _mm_prefetch(reinterpret_cast<const char*>(line), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(line + 64), _MM_HINT_T0);
      }
    }
    __m512i b[kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) b[v] = _mm512_loadu_si512(panel + (v / 2) * panel_stride + q * kPanel + 16 * (v % 2));
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m512i ad = _mm512_set1_epi32(static_cast<int32_t>(a[q * kMr + r]));
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) acc[r][v] = dp(acc[r][v], ad, b[v]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v)
      if (m[v] != 0) _mm512_mask_storeu_ps(c + r * ldc + 16 * v, m[v], acc[r][v]);
}

using TileFn = void (*)(const uint32_t*, const uint32_t*, int64_t, int64_t, bool, float*, int64_t, const __mmask16*,
                        const float*, const char*);
template <bool Ahead>
constexpr TileFn kTiles[2][kMr + 1] = {
    {nullptr, tile<1, 1, Ahead>, tile<2, 1, Ahead>, tile<3, 1, Ahead>, tile<4, 1, Ahead>, tile<5, 1, Ahead>, tile<6, 1, Ahead>},
    {nullptr, tile<1, 2, Ahead>, tile<2, 2, Ahead>, tile<3, 2, Ahead>, tile<4, 2, Ahead>, tile<5, 2, Ahead>, tile<6, 2, Ahead>}};

__mmask16 lanes_mask(int64_t n) { return n >= 16 ? __mmask16{0xFFFF} : n <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << n) - 1); }

// Rows [i0, i1) x pairs [p0, p1) of A packed as BLIS packs A: per tile of kMr rows, pair by
// pair, the rows' dwords side by side, so a tile's broadcasts read one contiguous stream
// instead of kMr rows lda apart (rows 4 KB apart share L1 sets: at 2048^3 the unpacked
// reads ran at 59% of the vdpbf16ps peak). The last pair of an odd k gets +0 in its high
// half, as the weights' panels have it. Rows past a partial tile are never read.
void pack_a_block(const uint16_t* a, int64_t lda, int64_t i0, int64_t i1, int64_t p0, int64_t p1, int64_t k,
                  uint32_t* out) {
  const int64_t pairs = p1 - p0;
  for (int64_t i = i0; i < i1; ++i) {
    const uint16_t* row = a + i * lda;
    uint32_t* dst = out + (i - i0) / kMr * pairs * kMr + (i - i0) % kMr;
    const int64_t full = p1 < k / 2 ? p1 : k / 2;  // pairs whose two elements exist
    int64_t q = p0;
    for (; q < full; ++q) {
      uint32_t d;
      std::memcpy(&d, row + 2 * q, 4);
      dst[(q - p0) * kMr] = d;
    }
    for (; q < p1; ++q) dst[(q - p0) * kMr] = pair_at(row, k, q);
  }
}

void gemm(const uint16_t* a, int64_t m, int64_t lda, const uint32_t* packed, int64_t n, int64_t k, float* c,
          int64_t ldc) {
  const int64_t pairs = (k + 1) / 2, panels = (n + kPanel - 1) / kPanel;
  if (pairs == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  const bool stream = m <= kStreamRows, whole = pairs <= kKcWhole;
  const int64_t kc = stream ? std::min(pairs, m <= kMr ? kKcStream : kKcWhole) : whole ? pairs : kKc;
  const int64_t mc = stream ? (m + kMr - 1) / kMr * kMr : whole ? kMcWhole : kMc;  // streaming: all m rows
  uint32_t* const a_block = a_block_of_thread(mc * kc);
  const int64_t panel_stride = pairs * kPanel;
  for (int64_t p0 = 0; p0 < pairs; p0 += kc) {
    const int64_t p1 = p0 + kc < pairs ? p0 + kc : pairs;
    for (int64_t i0 = 0; i0 < m; i0 += mc) {
      const int64_t i1 = i0 + mc < m ? i0 + mc : m;
      pack_a_block(a, lda, i0, i1, p0, p1, k, a_block);
      for (int64_t j = 0; j < panels; j += 2) {
        const int np = j + 1 < panels ? 2 : 1;
        const uint32_t* panel = packed + static_cast<std::size_t>(j * panel_stride + p0 * kPanel);
        // The next panels' block, (p1 - p0) * 128 bytes per panel, fetched a line per pair by
        // the first row tiles; without a next block the tiles touch their own panel.
        const int64_t np_next = j + 2 < panels ? std::min<int64_t>(2, panels - j - 2) : 0;
        const int64_t slice = (p1 - p0) * 64, block_bytes = np_next * (p1 - p0) * kPanel * 4;
        __mmask16 masks[4];
        for (int v = 0; v < 4; ++v) masks[v] = lanes_mask(n - j * kPanel - 16 * v);
        for (int64_t i = i0; i < i1; i += kMr) {
          const int64_t rows = i1 - i < kMr ? i1 - i : kMr;
          // The next tile's output: the rows below, or the next panels' first rows (only
          // whole tiles of rows that exist are prefetched).
          const float* next = i + 2 * kMr <= i1                ? c + (i + kMr) * ldc + j * kPanel
                              : j + np < panels && i0 + kMr <= i1 ? c + i0 * ldc + (j + np) * kPanel
                                                                  : nullptr;
          const int64_t at = (i - i0) / kMr * slice;  // this tile's slice of the next block
          const char* pf = reinterpret_cast<const char*>(panel);
          if (!stream && at < block_bytes) {
            const int64_t in_panel = (p1 - p0) * kPanel * 4;
            pf = reinterpret_cast<const char*>(packed + static_cast<std::size_t>((j + 2 + at / in_panel) * panel_stride +
                                                                                  p0 * kPanel)) +
                 at % in_panel;
          }
          const TileFn run = stream && i == i0 ? kTiles<true>[np - 1][rows] : kTiles<false>[np - 1][rows];
          run(a_block + (i - i0) * (p1 - p0), panel, panel_stride, p1 - p0, p0 == 0,
              c + i * ldc + j * kPanel, ldc, masks, next, pf);
        }
      }
    }
  }
}

}  // namespace

FIXQ_KERNEL_TABLE(Bf16Kernels, kBf16, Isa::Avx512Bf16){dot, gemm};

}  // namespace fixq::bf16_detail::FIXQ_KERNEL_NS(avx512bf16)
