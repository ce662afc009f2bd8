// Private, for the gguf *_avx512.cpp kernels: the matrix-vector driver of the formats whose
// dot product is a sequence of float terms added one by one to a running sum (ggml's generic
// vec_dot: sumf += term, block after block; one term per block, or one per sub-block).
//
// That sum is a chain of dependent float additions, 2 cycles each on Zen 5, longer than the
// vector work of a 32-element block. So the terms are formed 16 at a time in a vector (the
// integer block sums and the float products are independent per block), and the additions
// of several rows run interleaved: row r's sum still adds its terms one by one, in order,
// exactly as the reference does, but the rows' chains overlap. Sixteen rows at a time do
// it in vector lanes: their 16 x 16 terms are transposed (64 shuffles), so that one vaddps
// adds term j of each of the 16 rows to its own running sum, lane by lane; fewer rows go
// through scalar additions. A single dot product is the one-row case.
//
// The activation vector is prepared once per call (F::prepare: its blocks' scales, sums and
// quants in the layout the format's kernel reads), then every row reuses it.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/thread_address.h"
#include "gguf/util_avx512.h"

namespace fixq::gguf::detail {

// F, a format: static constexpr kBlockBytes (bytes of an x block), kChunk (x blocks per
// terms() call: 16 terms), kTerms (terms per x block); a type Prepared (the activation
// blocks one terms() call pairs with); prepare(y, chunk, blocks, Prepared*): the chunk's
// activation blocks (blocks < kChunk at the end: the rest zero); terms(x, Prepared): the
// 16 terms of kChunk x blocks (readable memory), in the reference's order.
template <class F>
struct TermsDriver {
  static void matvec(const std::byte* x, int64_t rows, int64_t n_blocks, const std::byte* y, float* out) {
    const int64_t chunks = (n_blocks + F::kChunk - 1) / F::kChunk;
    static thread_local std::vector<typename F::Prepared> prepared_of_thread;
    auto& prepared = cpu::thread_address(prepared_of_thread);  // once, not in the loops
    if (static_cast<int64_t>(prepared.size()) < chunks) prepared.resize(static_cast<std::size_t>(chunks));
    for (int64_t c = 0; c < chunks; ++c)
      F::prepare(y, c, std::min<int64_t>(F::kChunk, n_blocks - c * F::kChunk), &prepared[static_cast<std::size_t>(c)]);
    const std::size_t row_bytes = static_cast<std::size_t>(n_blocks) * F::kBlockBytes;
    int64_t r = 0;
    for (; r + 16 <= rows; r += 16)
      tile16(x + static_cast<std::size_t>(r) * row_bytes, row_bytes, n_blocks, prepared.data(), out + r);
    for (; r + 8 <= rows; r += 8)
      tile<8>(x + static_cast<std::size_t>(r) * row_bytes, row_bytes, n_blocks, prepared.data(), out + r);
    for (; r < rows; ++r) tile<1>(x + static_cast<std::size_t>(r) * row_bytes, row_bytes, n_blocks, prepared.data(), out + r);
  }

  // One row: the dot product, the same sums as a one-row matvec.
  static float dot(const std::byte* x, const std::byte* y, int64_t n_blocks) {
    float r;
    matvec(x, 1, n_blocks, y, &r);
    return r;
  }

 private:
  // The terms of x blocks [c * kChunk, + blocks) of one row; a short last chunk is copied
  // into a zero-filled buffer so that terms() never reads past the row.
  [[gnu::always_inline]] static inline __m512 chunk_terms(const std::byte* row, int64_t c, int64_t blocks,
                                                          const typename F::Prepared& p) {
    const std::byte* xp = row + static_cast<std::size_t>(c) * F::kChunk * F::kBlockBytes;
    if (blocks == F::kChunk) return F::terms(xp, p);
    alignas(64) std::byte tail[F::kChunk * F::kBlockBytes] = {};
    std::memcpy(tail, xp, static_cast<std::size_t>(blocks) * F::kBlockBytes);
    return F::terms(tail, p);
  }

  // v[r] = row r's 16 terms -> v[j] = term j of rows 0..15 (lane r). Four rounds of 16
  // shuffles: pairs of rows, quads, then 128-bit lanes twice.
  [[gnu::always_inline]] static inline void transpose16(__m512 (&v)[16]) {
    __m512 a[16], b[16];
    for (int i = 0; i < 8; ++i) {
      a[2 * i] = _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]);
      a[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]);
    }
    // b[4i + k], 128-bit lane L: term 4L + k of rows 4i .. 4i + 3.
    for (int i = 0; i < 4; ++i) {
      const __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
      const __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
      b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
      b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
      b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
      b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    // 128-bit lanes (0, 2 | 0, 2) and (1, 3 | 1, 3) of two vectors (vshufi32x4: SIMDe 0.7
    // has no vshuff32x4).
    const auto even = [](__m512 p, __m512 q) {
      return _mm512_castsi512_ps(_mm512_shuffle_i32x4(_mm512_castps_si512(p), _mm512_castps_si512(q), 0x88));
    };
    const auto odd = [](__m512 p, __m512 q) {
      return _mm512_castsi512_ps(_mm512_shuffle_i32x4(_mm512_castps_si512(p), _mm512_castps_si512(q), 0xDD));
    };
    for (int k = 0; k < 4; ++k) {
      const __m512 x0 = even(b[k], b[4 + k]), x1 = odd(b[k], b[4 + k]);
      const __m512 y0 = even(b[8 + k], b[12 + k]), y1 = odd(b[8 + k], b[12 + k]);
      v[k] = even(x0, y0);
      v[8 + k] = odd(x0, y0);
      v[4 + k] = even(x1, y1);
      v[12 + k] = odd(x1, y1);
    }
  }

  // Sixteen rows, their sums in the lanes of one vector: acc += term j of every row, j in
  // order (the same IEEE additions, in the same order, as the scalar chains).
  static void tile16(const std::byte* x, std::size_t row_bytes, int64_t n_blocks, const typename F::Prepared* p,
                     float* out) {
    __m512 acc = _mm512_setzero_ps();
    const int64_t full = n_blocks / F::kChunk;
    constexpr std::size_t kChunkBytes = F::kChunk * F::kBlockBytes;
    for (int64_t c = 0; c < full; ++c) {
      __m512 t[16];
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r) t[r] = F::terms(x + r * row_bytes + static_cast<std::size_t>(c) * kChunkBytes, p[c]);
      transpose16(t);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) acc = _mm512_add_ps(acc, t[j]);
    }
    if (const int64_t blocks = n_blocks - full * F::kChunk; blocks > 0) {  // a short last chunk, once
      alignas(64) float rows16[16][16];
#pragma GCC unroll 1
      for (int r = 0; r < 16; ++r) _mm512_store_ps(rows16[r], chunk_terms(x + r * row_bytes, full, blocks, p[full]));
      __m512 t[16];
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r) t[r] = _mm512_load_ps(rows16[r]);
      transpose16(t);
      for (int64_t j = 0; j < blocks * F::kTerms; ++j) acc = _mm512_add_ps(acc, t[j]);
    }
    _mm512_storeu_ps(out, acc);
  }

  template <int R>
  static void tile(const std::byte* x, std::size_t row_bytes, int64_t n_blocks, const typename F::Prepared* p,
                   float* out) {
    float acc[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = 0.0f;
    alignas(64) float t[R][16];
    for (int64_t c = 0; c * F::kChunk < n_blocks; ++c) {
      const int64_t blocks = std::min<int64_t>(F::kChunk, n_blocks - c * F::kChunk);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) _mm512_store_ps(t[r], chunk_terms(x + r * row_bytes, c, blocks, p[c]));
      if (blocks == F::kChunk) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j)
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) acc[r] += t[r][j];
      } else {
        for (int64_t j = 0; j < blocks * F::kTerms; ++j)
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) acc[r] += t[r][j];
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) out[r] = acc[r];
  }
};

// Rows four at a time through F::dot_rows<4>(xs, n_blocks, Prepared*, out) after
// F::prepare(y, Prepared*) per activation block (the last rows through dot_rows<2> and
// <1>), for the formats whose terms are far apart (a K-quant super-block's one term per
// 256 elements leaves the addition chain idle). Other rows give each super-block's long
// chain of dependent integer work (scales, products, fold) independent partners: against
// one row at a time, q3_K and q5_K ran ~9% faster, q6_K 2-5% (Zen 5, alternated runs).
template <class F>
struct RowDriver {
  static void matvec(const std::byte* x, int64_t rows, int64_t n_blocks, const std::byte* y, float* out) {
    static thread_local std::vector<typename F::Prepared> prepared_of_thread;
    auto& prepared = cpu::thread_address(prepared_of_thread);  // once, not in the loops
    if (static_cast<int64_t>(prepared.size()) < n_blocks) prepared.resize(static_cast<std::size_t>(n_blocks));
    for (int64_t b = 0; b < n_blocks; ++b) F::prepare(y + static_cast<std::size_t>(b) * F::kYBlockBytes, &prepared[static_cast<std::size_t>(b)]);
    const std::size_t row_bytes = static_cast<std::size_t>(n_blocks) * F::kBlockBytes;
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      const std::byte* xs[4];
      for (int q = 0; q < 4; ++q) xs[q] = x + static_cast<std::size_t>(r + q) * row_bytes;
      F::template dot_rows<4>(xs, n_blocks, prepared.data(), out + r);
    }
    for (; r + 2 <= rows; r += 2) {
      const std::byte* xs[2] = {x + static_cast<std::size_t>(r) * row_bytes, x + static_cast<std::size_t>(r + 1) * row_bytes};
      F::template dot_rows<2>(xs, n_blocks, prepared.data(), out + r);
    }
    if (r < rows) {
      const std::byte* xs[1] = {x + static_cast<std::size_t>(r) * row_bytes};
      F::template dot_rows<1>(xs, n_blocks, prepared.data(), out + r);
    }
  }
};

// What every TermsDriver format states: its block's size, how many x blocks one terms()
// call reads, how many float terms each block gives, and the activations' prepared form.
template <class Block, int Chunk, int Terms, class P>
struct TermsFormat {
  static constexpr std::size_t kBlockBytes = sizeof(Block);
  static constexpr int kChunk = Chunk, kTerms = Terms;
  using Prepared = P;
};

}  // namespace fixq::gguf::detail

// A family's exported dot_<x>_<y> and matvec_<x>_<y> through driver D (D::dot, D::matvec),
// for use inside the family's namespace.
#define FIXQ_GGUF_DRIVER_KERNELS(x, y, D)                                                        \
  float dot_##x##_##y(const std::byte* a, const std::byte* b, int64_t n) { return D::dot(a, b, n); } \
  void matvec_##x##_##y(const std::byte* a, int64_t rows, int64_t n, const std::byte* b, float* out) { \
    D::matvec(a, rows, n, b, out);                                                                \
  }
