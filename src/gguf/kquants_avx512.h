// Private, for dot_kquants_avx512.cpp and dot_kquants_avx512vbmi.cpp only: the K-quant
// kernels of the AVX-512 families, written once. The AVX512_VBMI family's file defines
// FIXQ_GGUF_VBMI first: its byte reorders are single vpermb instructions (class_order,
// Q4KChunks) where the AVX-512 family needs a permute or broadcast and a vpshufb. Everything
// here has internal linkage: each file compiles its own copy with its own flags.
//
// The AVX-512 VNNI dot products and matrix-vector products of the 256-element formats with
// Q8_K: the K-quants Q2_K ... Q6_K, IQ4_XS, TQ1_0 and TQ2_0. Bit-identical (bound 0) to
// dot_*_ref.
//
// Q3_K ... Q6_K: ggml's generic dots keep eight int32 lanes, lane l summing scale * q8 * q
// over the elements e = l (mod 8) of a super-block. Here both operands are put in "class
// order" (avx512_util.h class_order: within each 32 elements, dword d holds the four with
// e = d mod 8), so that vpmaddubsw's pairs and vpdpwssd's pairs of pairs each stay inside
// one class and one 16-element sub-block: vpdpwssd multiplies the pair sums by their
// sub-block's scale and adds them into the class's int32 lane, exactly. The activations are
// put in class order once per call. Codes u = q + off are unsigned (u <= 63, so no int16
// pair saturates: |pair| <= 2 * 63 * 128); off * (y pair sums) is subtracted before the
// scale, also prepared once per call.
//
// IQ4_XS (a term per 32-element sub-block) goes through the interleaved-rows driver of
// matvec_avx512.h, like the Q8_0 formats. Q2_K, TQ1_0 and TQ2_0 (one term per 256
// elements) go through QuadDriver, Q3_K, Q5_K and Q6_K through matvec_avx512.h's
// RowDriver, Q4_K through ScaleMinDriver (which the AVX512_VBMI family also uses for Q5_K,
// in nibble_planes_avx512vbmi.h's layout).
#pragma once

#include "cpu/thread_address.h"
#include "gguf/avx512_util.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/matvec_avx512.h"

namespace fixq::gguf::detail {

namespace {

constexpr std::size_t kQ8K = sizeof(BlockQ8_K);

// One Q8_K super-block for the class-lane kernels.
struct Q8KClasses {
  alignas(64) int8_t qs[kQK_K];   // each 32 quants in class order
  alignas(64) int16_t off[128];   // off * (sum of each vpmaddubsw pair of qs)
  float d;
  alignas(32) int16_t bsums[16];
};

template <int kOff>
void prepare_classes(const std::byte* y, Q8KClasses* p) {
  p->d = load_as<float>(y + offsetof(BlockQ8_K, d));
  std::memcpy(p->bsums, y + offsetof(BlockQ8_K, bsums), sizeof p->bsums);
  for (int k = 0; k < 4; ++k) {  // qs, 64 at a time
    const __m512i q = class_order(load64(y + offsetof(BlockQ8_K, qs) + 64 * k), false);
    _mm512_store_si512(p->qs + 64 * k, q);
    const __m512i pairs = _mm512_maddubs_epi16(_mm512_set1_epi8(1), q);
    _mm512_store_si512(p->off + 32 * k, _mm512_mullo_epi16(pairs, _mm512_set1_epi16(kOff)));
  }
}

// Scale words for two 32-element groups whose sub-blocks of 16 have the int16 scales s[a],
// s[a + 1] (lower group) and s[a + 2], s[a + 3] (upper): in class order a dword's first
// pair comes from the group's first 16 elements, its second pair from the last 16.
FIXQ_GGUF_INLINE __m512i scale_words16(__m512i s, int a) {
  const __m512i lo = _mm512_set1_epi32(a | (a + 1) << 16), hi = _mm512_set1_epi32((a + 2) | (a + 3) << 16);
  return _mm512_permutexvar_epi16(_mm512_mask_blend_epi32(0xFF00, lo, hi), s);
}

// Scale words for two 32-element groups with one scale each (s[a], s[a + 1]).
FIXQ_GGUF_INLINE __m512i scale_words32(__m512i s, int a) {
  return _mm512_permutexvar_epi16(_mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi16(static_cast<short>(a)),
                                                          _mm512_set1_epi16(static_cast<short>(a + 1))),
                                  s);
}

// lanes += scale * (u - off) . y for the 64 codes u of two groups against prepared y.
FIXQ_GGUF_INLINE __m512i accumulate(__m512i lanes, __m512i u, const Q8KClasses& p, int k, __m512i scales, bool offset) {
  __m512i pairs = _mm512_maddubs_epi16(u, _mm512_load_si512(p.qs + 64 * k));
  if (offset) pairs = _mm512_sub_epi16(pairs, _mm512_load_si512(p.off + 32 * k));
  return _mm512_dpwssd_epi32(lanes, pairs, scales);
}

// The 6-bit scales (4 x 8 bits: sc[0..7]) and mins (m[0..7]) of Q4_K / Q5_K, as bytes
// (ggml's get_scale_min_k4 on 32-bit words).
FIXQ_GGUF_INLINE void scales_mins_k4(const std::byte* s, uint64_t* sc, uint64_t* m) {
  const uint32_t a = load_as<uint32_t>(s), b = load_as<uint32_t>(s + 4), c = load_as<uint32_t>(s + 8);
  const uint32_t sc_hi = (c & 0x0F0F0F0Fu) | ((a >> 2) & 0x30303030u);
  const uint32_t m_hi = ((c >> 4) & 0x0F0F0F0Fu) | ((b >> 2) & 0x30303030u);
  *sc = (a & 0x3F3F3F3Fu) | (uint64_t{sc_hi} << 32);
  *m = (b & 0x3F3F3F3Fu) | (uint64_t{m_hi} << 32);
}

// sum_j bsums[j] * mins[j / 2] (exact in int32).
FIXQ_GGUF_INLINE int32_t bsums_times_mins(const Q8KClasses& p, uint64_t mins) {
  const __m128i m = _mm_cvtsi64_si128(static_cast<long long>(mins));
  const __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m, m));
  const __m256i prod = _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p.bsums)), m16);
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(prod), _mm256_extracti128_si256(prod, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// The row loop shared by Q3_K, Q5_K and Q6_K: sums[l] += (dx * dy) * float(lane[l]) per
// super-block (and, with mins, sumf -= (dmin * dy) * float(bsums . mins)); at the end sumf
// += sums[0], ..., sums[7] in order. R rows (1, 2 or 4) at once: row r's eight sums in the
// 256-bit half r % 2 of vector r / 2, each lane the same float steps as alone. F::lanes
// returns a row's accumulator unfolded: two rows' are folded together, the eight lanes of
// row a and of row b in two shuffles and one add (F::kFoldA, kFoldB: vshufi32x4 immediates
// that pick the 128-bit lanes to add), instead of an extract and an add per row and an
// insert per pair.
template <class F>
struct LanesFormat {
  static constexpr std::size_t kYBlockBytes = kQ8K;
  using Prepared = Q8KClasses;
  static constexpr int kFoldA = 0x44, kFoldB = 0xEE;  // unless F says otherwise: the 256-bit halves added
  static void prepare(const std::byte* y, Prepared* p) { prepare_classes<F::kOff>(y, p); }
  template <int R, class P>  // P: F::Prepared (F is incomplete here)
  static void dot_rows(const std::byte* const* xs, int64_t n, const P* p, float* out) {
    constexpr int kPairs = (R + 1) / 2;
    const std::byte* x[R];
    float sumf[R];
    for (int r = 0; r < R; ++r) x[r] = xs[r], sumf[r] = 0.0f;
    __m512 sums[kPairs];
    for (int h = 0; h < kPairs; ++h) sums[h] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; ++i) {
      __m512i lanes[R];
      float d[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {  // unrolled: the rows' chains interleave
        int32_t min_term = 0;
        lanes[r] = F::lanes(x[r], p[i], &min_term);
        d[r] = load_fp16(x[r] + offsetof(typename F::Block, d)) * p[i].d;
        if constexpr (F::kMins)
          sumf[r] -= load_fp16(x[r] + offsetof(typename F::Block, dmin)) * p[i].d * to_f32(min_term);
        x[r] += F::kBlockBytes;
      }
#pragma GCC unroll 2
      for (int h = 0; h < kPairs; ++h) {
        const int r0 = 2 * h, r1 = std::min(2 * h + 1, R - 1);
        const __m512i l = _mm512_add_epi32(_mm512_shuffle_i32x4(lanes[r0], lanes[r1], F::kFoldA),
                                           _mm512_shuffle_i32x4(lanes[r0], lanes[r1], F::kFoldB));
        const __m512 dd = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(d[r0]), _mm512_set1_ps(d[r1]));
        sums[h] = _mm512_add_ps(sums[h], _mm512_mul_ps(dd, _mm512_cvtepi32_ps(l)));
      }
    }
    for (int h = 0; h < kPairs; ++h) {
      alignas(64) float s[16];
      _mm512_store_ps(s, sums[h]);
      for (int r = 2 * h; r < std::min(2 * h + 2, R); ++r) {
        for (int l = 0; l < 8; ++l) sumf[r] += s[8 * (r - 2 * h) + l];
        out[r] = sumf[r];
      }
    }
  }
};

// ---- Q4_K, with the scales and float factors of a row prepared first (ScaleMinDriver). The
// AVX-512 family's layout (Q4KClassLayout) follows; the AVX512_VBMI family has its own
// (nibble_planes_avx512vbmi.h).
//
// Each 32 bytes of qs hold elements 64k + j (low nibbles, sub-block 2k) and 64k + 32 + j
// (high nibbles, sub-block 2k + 1). Bytes j and j + 8 hold elements of the same class (j
// mod 8), and so do their high nibbles: one vpshufb on the 32 bytes (broadcast to both
// halves) makes the dword [lo(b_j), lo(b_j+8), hi(b_j), hi(b_j+8)], whose first word
// belongs to sub-block 2k and second to 2k + 1. vpmaddubsw sums each word's two products
// and vpdpwssd multiplies the word pair by the dword (sc[2k], sc[2k + 1]), the same for all
// 16 dwords: one broadcast load, no scale shuffle. The activations are put in that order
// once per call (q4k_order).
//
// 128-bit lane L of a chunk: src bytes 16 (L & 1) + (0..15), classes 4 (L >> 1) + (0..3).

// The vpshufb index above: lane L, dword d -> bytes c, c + 8, c, c + 8 with c = d + 4 (L >> 1).
FIXQ_GGUF_INLINE __m512i q4k_lane_index() {
  return _mm512_setr_epi32(0x08000800, 0x09010901, 0x0A020A02, 0x0B030B03, 0x08000800, 0x09010901, 0x0A020A02,
                           0x0B030B03, 0x0C040C04, 0x0D050D05, 0x0E060E06, 0x0F070F07, 0x0C040C04, 0x0D050D05,
                           0x0E060E06, 0x0F070F07);
}

// The 32 bytes at p in that order (Q4KClassLayout, and Q3_K's codes). AVX512_VBMI: one
// vpermb on the plain load (lane L reads bytes 16 (L & 1) + the lane index), instead of a
// 256-bit broadcast and a vpshufb: the broadcast from memory takes a vector ALU slot on Zen
// 5 (q3_K ran 5% faster, and so did q4_K by 10% before it got its own VBMI layout).
struct Q4KChunks {
#if defined(FIXQ_GGUF_VBMI)
  __m512i index = _mm512_add_epi8(q4k_lane_index(), _mm512_setr_epi32(0, 0, 0, 0, 0x10101010, 0x10101010, 0x10101010,
                                                                      0x10101010, 0, 0, 0, 0, 0x10101010, 0x10101010,
                                                                      0x10101010, 0x10101010));
  FIXQ_GGUF_INLINE_MEMBER __m512i operator()(const std::byte* p) const {
    return _mm512_permutexvar_epi8(index, _mm512_castsi256_si512(load32(p)));
  }
#else
  __m512i index = q4k_lane_index();
  FIXQ_GGUF_INLINE_MEMBER __m512i operator()(const std::byte* p) const {
    return _mm512_shuffle_epi8(_mm512_broadcast_i64x4(load32(p)), index);
  }
#endif
};

// The activations of a Q4_K chunk (64 bytes of q8, elements 64k + 0..63) in the order of
// the codes above: lane L takes dwords {0, 2, 8, 10} + 4 (L & 1) + (L >> 1) of the chunk
// (elements c + {0, 8, 32, 40}), vpshufb transposes them to class order.
FIXQ_GGUF_INLINE __m512i q4k_order(__m512i y) {
  const __m512i dwords = _mm512_setr_epi32(0, 2, 8, 10, 4, 6, 12, 14, 1, 3, 9, 11, 5, 7, 13, 15);
  const __m512i bytes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dwords, y), bytes);
}

// The activations' part shared by the layouts: per four super-blocks (128-bit lane L:
// super-block 4q + L) the bsums as words 0-7 and 8-15, and dy in float 4L.
struct ScaleMinActQuad {
  alignas(64) int16_t bs_lo[32];
  alignas(64) int16_t bs_hi[32];
  alignas(64) float dy[16];
};
// Per four super-blocks of one row, three arrays of 16 (so that super-block i's values sit
// at 4i of each, whatever the quad): the scale dwords (sc[2k] | sc[2k + 1] << 16 at 4i + k),
// dx * dy at 4i, and (dmin * dy) * float(bsums . mins) at 4i.
struct ScaleMinRowQuad {
  alignas(64) int32_t v[16];
};
struct ScaleMinRowQuadF {
  alignas(64) float v[16];
};
struct ScaleMinRow {
  std::vector<ScaleMinRowQuad> sw;
  std::vector<ScaleMinRowQuadF> d, m;
  void resize(std::size_t nq) {
    if (sw.size() < nq) {
      sw.resize(nq);
      d.resize(nq);
      m.resize(nq);
    }
  }
};

// What a scale-min layout's dot walks per row: the quants (from x_offset into each block),
// the prepared scale words and float terms, and sumf, which takes -m per super-block in
// order and the eight class sums at the end, in class order.
template <int R, class Block>
struct ScaleMinCursor {
  const std::byte* x[R];
  const int32_t* sw[R];
  const float *d[R], *m[R];
  float sumf[R];
  ScaleMinCursor(const std::byte* const* xs, const ScaleMinRow* const* rows, std::size_t x_offset) {
    for (int r = 0; r < R; ++r) {
      x[r] = xs[r] + x_offset;
      sw[r] = rows[r]->sw[0].v;
      d[r] = rows[r]->d[0].v;
      m[r] = rows[r]->m[0].v;
      sumf[r] = 0.0f;
    }
  }
  // After a super-block: its m term subtracted, every pointer on to the next.
  FIXQ_GGUF_INLINE_MEMBER void next() {
    for (int r = 0; r < R; ++r) {
      sumf[r] -= *m[r];
      x[r] += sizeof(Block);
      sw[r] += 4;
      d[r] += 4;
      m[r] += 4;
    }
  }
  // out[r] = sumf[r] + s[lane(r, 0)] + ... + s[lane(r, 7)].
  template <class Lane>
  FIXQ_GGUF_INLINE_MEMBER void finish(const float* s, Lane lane, float* out) {
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < 8; ++c) sumf[r] += s[lane(r, c)];
      out[r] = sumf[r];
    }
  }
};

// The six-bit scales and mins of four Q4_K headers (128-bit lane L: d, dmin, scales[12] of
// super-block L) as bytes sc[0..7], m[0..7] per lane (scale_min_k4): sc[j < 4] = s[j] & 63,
// m[j < 4] = s[j + 4] & 63, sc[4 + i] = (s[8 + i] & 15) | (s[i] >> 6) << 4, m[4 + i] =
// (s[8 + i] >> 4) | (s[4 + i] >> 6) << 4.
FIXQ_GGUF_INLINE __m512i q4k_scales_mins(__m512i h) {
  const __m512i p = _mm512_shuffle_epi8(h, _mm512_broadcast_i32x4(_mm_setr_epi8(4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11,
                                                                                 12, 13, 14, 15)));
  const __m512i low = _mm512_and_si512(_mm512_mask_srli_epi16(p, 0xC0C0C0C0u, p, 4),
                                       _mm512_broadcast_i32x4(_mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F)));
  const __m512i r = _mm512_shuffle_epi8(h, _mm512_broadcast_i32x4(_mm_setr_epi8(-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1,
                                                                                 8, 9, 10, 11)));
  return _mm512_ternarylogic_epi32(low, _mm512_srli_epi16(r, 2), _mm512_set1_epi8(0x30), 0xF8);  // low | (r' & 0x30)
}

// What every layout of ggml's scale-min formats (Q4_K, Q5_K: the same 16-byte header of d,
// dmin and 6-bit scales and mins) shares: the activations' bsums and dy per four
// super-blocks, and a row's scale words, d and m terms, prepared before its dot. Layout
// gives the block (Block), the activations' order (Acts, prepare_acts), the order of the
// scale words (scale_words: from the bytes sc[0..7] of each 128-bit lane, the 16 dwords of a
// ScaleMinRowQuad) and the dot (dot_rows<R>, R = 1 or 2 rows at once).
template <class Layout>
struct ScaleMinDriver {
  using Acts = typename Layout::Acts;
  using Block = typename Layout::Block;

  static void prepare(const std::byte* y, int64_t n, Acts* a, ScaleMinActQuad* aq) {
    for (int64_t q = 0; q < (n + 3) / 4; ++q) {
      ScaleMinActQuad& d = aq[q];
      std::memset(&d, 0, sizeof d);
      for (int64_t i = 4 * q; i < std::min<int64_t>(n, 4 * q + 4); ++i) {
        const std::byte* b = y + static_cast<std::size_t>(i) * kQ8K;
        const int l = static_cast<int>(i - 4 * q);
        Layout::prepare_acts(b + offsetof(BlockQ8_K, qs), &a[i]);
        std::memcpy(d.bs_lo + 8 * l, b + offsetof(BlockQ8_K, bsums), 16);
        std::memcpy(d.bs_hi + 8 * l, b + offsetof(BlockQ8_K, bsums) + 16, 16);
        d.dy[4 * l] = load_as<float>(b + offsetof(BlockQ8_K, d));
      }
    }
  }

  // The row's ScaleMinRowQuads from its headers, four super-blocks at a time.
  static void prepare_row(const std::byte* x, int64_t n, const ScaleMinActQuad* aq, ScaleMinRow* rq) {
    for (int64_t q = 0; q < (n + 3) / 4; ++q) {
      __m512i h;
      const std::byte* b = x + static_cast<std::size_t>(q) * 4 * sizeof(Block);
      if (4 * q + 4 <= n) {
        h = _mm512_castsi128_si512(load16(b));
        h = _mm512_inserti32x4(h, load16(b + sizeof(Block)), 1);
        h = _mm512_inserti32x4(h, load16(b + 2 * sizeof(Block)), 2);
        h = _mm512_inserti32x4(h, load16(b + 3 * sizeof(Block)), 3);
      } else {  // the short last quad: missing headers zero
        alignas(64) std::byte hs[64] = {};
        for (int64_t l = 0; l < n - 4 * q; ++l) std::memcpy(hs + 16 * l, b + l * sizeof(Block), 16);
        h = _mm512_load_si512(hs);
      }
      const __m512i v = q4k_scales_mins(h);
      _mm512_store_si512(rq->sw[q].v, Layout::scale_words(v));
      const __m512i mm = _mm512_unpackhi_epi8(v, v);  // m0 m0 m1 m1 ... m7 m7
      // Two vpdpwssd chained from zero: both products and their sum in two instructions
      // (vpmaddwd twice and vpaddd would be three); |m| <= 63: no wrap.
      const __m512i zero = _mm512_setzero_si512();
      const __m512i prod = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(zero, _mm512_unpacklo_epi8(mm, zero), _mm512_load_si512(aq[q].bs_lo)),
                                               _mm512_unpackhi_epi8(mm, zero), _mm512_load_si512(aq[q].bs_hi));
      __m512i t = _mm512_add_epi32(prod, _mm512_unpackhi_epi64(prod, prod));
      t = _mm512_add_epi32(t, _mm512_srli_epi64(t, 32));  // dword 0 of lane L: bsums . mins
      const __m512 dy = _mm512_load_ps(aq[q].dy);
      const __m512 dx = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h));
      const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h, 16)));
      _mm512_store_ps(rq->d[q].v, _mm512_mul_ps(dx, dy));
      _mm512_store_ps(rq->m[q].v, _mm512_mul_ps(_mm512_mul_ps(dmin, dy), _mm512_cvtepi32_ps(t)));
    }
  }

  static void matvec(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
    static thread_local std::vector<Acts> acts_of_thread;
    static thread_local std::vector<ScaleMinActQuad> act_quads_of_thread;
    static thread_local ScaleMinRow row_data_of_thread[2];
    auto& acts = cpu::thread_address(acts_of_thread);
    auto& act_quads = cpu::thread_address(act_quads_of_thread);
    auto& row_data = cpu::thread_address(row_data_of_thread);
    const auto nq = static_cast<std::size_t>((n + 3) / 4);
    if (acts.size() < static_cast<std::size_t>(n)) acts.resize(static_cast<std::size_t>(n));
    if (act_quads.size() < nq) act_quads.resize(nq);
    row_data[0].resize(nq);
    row_data[1].resize(nq);
    prepare(y, n, acts.data(), act_quads.data());
    const std::size_t row_bytes = static_cast<std::size_t>(n) * sizeof(Block);
    const ScaleMinRow* rd[2] = {&row_data[0], &row_data[1]};
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) {
      const std::byte* xs[2] = {x + static_cast<std::size_t>(r) * row_bytes, x + static_cast<std::size_t>(r + 1) * row_bytes};
      prepare_row(xs[0], n, act_quads.data(), &row_data[0]);
      prepare_row(xs[1], n, act_quads.data(), &row_data[1]);
      Layout::template dot_rows<2>(xs, n, acts.data(), rd, out + r);
    }
    if (r < rows) {
      const std::byte* xs[1] = {x + static_cast<std::size_t>(r) * row_bytes};
      prepare_row(xs[0], n, act_quads.data(), &row_data[0]);
      Layout::template dot_rows<1>(xs, n, acts.data(), rd, out + r);
    }
  }
};

// The class layout above: activations in q4k_order, scale dword k = sc[2k] | sc[2k + 1] << 16
// (4i + k of a ScaleMinRowQuad for super-block i).
struct Q4KClassLayout {
  using Block = BlockQ4_K;
  struct Acts {
    alignas(64) int8_t qs[kQK_K];
  };
  static void prepare_acts(const std::byte* qs, Acts* a) {
    for (int k = 0; k < 4; ++k) _mm512_store_si512(a->qs + 64 * k, q4k_order(load64(qs + 64 * k)));
  }
  FIXQ_GGUF_INLINE_MEMBER static __m512i scale_words(__m512i v) { return _mm512_unpacklo_epi8(v, _mm512_setzero_si512()); }

  // R (1 or 2) rows at once: each activation load serves R rows, and two rows' class lanes
  // share one fold, conversion, product and sum (row r in the 256-bit half r). Each row's
  // sums[l] and sumf still take their terms in super-block order.
  template <int R>
  static void dot_rows(const std::byte* const* xs, int64_t n, const Acts* a, const ScaleMinRow* const* rows, float* out) {
    const Q4KChunks chunk;
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    ScaleMinCursor<R, Block> row(xs, rows, offsetof(Block, qs));
    __m512 sums = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; ++i) {
      __m512i acc[R];
      for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
      for (int k = 0; k < 4; ++k) {
        const __m512i y = _mm512_load_si512(a[i].qs + 64 * k);
        for (int r = 0; r < R; ++r) {
          const __m512i z = chunk(row.x[r] + 32 * k);
          const __m512i u = _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xAAAAAAAAu, z, 4), low4);
          acc[r] = _mm512_dpwssd_epi32(acc[r], _mm512_maddubs_epi16(u, y), _mm512_set1_epi32(row.sw[r][k]));
        }
      }
      // 128-bit lanes 0 + 1: classes 0-3, 2 + 3: classes 4-7 (R = 1: the upper half, row 0's
      // again, unused).
      const int r1 = R - 1;
      const __m512i lanes = _mm512_add_epi32(_mm512_shuffle_i32x4(acc[0], acc[r1], 0x88),
                                             _mm512_shuffle_i32x4(acc[0], acc[r1], 0xDD));
      const __m512 dd = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(*row.d[0]), _mm512_set1_ps(*row.d[r1]));
      sums = _mm512_add_ps(sums, _mm512_mul_ps(dd, _mm512_cvtepi32_ps(lanes)));
      row.next();
    }
    alignas(64) float s[16];
    _mm512_store_ps(s, sums);
    row.finish(s, [](int r, int c) { return 8 * r + c; }, out);
  }
};

// Q3_K (BlockQ3_K: hmask, qs, scales: 16 six-bit codes, value - 32, d); u = q + 4, in
// the Q4_K order: qs byte l holds element 128h + 32j + l at bits 2j (j = 0..3), so the
// vpshufb of q4k_lane_index on 32 qs bytes gives dwords [b_c, b_c+8, b_c, b_c+8] whose first
// word takes the codes at bits 2j (sub-block 8h + 2j + a, a = L & 1) and second at bits 2j
// + 2 (sub-block 8h + 2j + 2 + a): one vpsrlvw per 64 codes; the elements are those of Q4_K
// chunk 2h + j / 2, so the activations are in q4k_order. The high bits come from hmask
// through the same vpshufb.
struct Q3K : LanesFormat<Q3K> {
  using Block = BlockQ3_K;
  static constexpr std::size_t kBlockBytes = sizeof(Block);
  static constexpr bool kMins = false;
  struct Prepared {
    alignas(64) int8_t qs[kQK_K];  // q4k_order
    alignas(64) int16_t off[128];  // 4 * (sum of each vpmaddubsw pair of qs)
    float d;
  };
  static void prepare(const std::byte* y, Prepared* p) {
    p->d = load_as<float>(y + offsetof(BlockQ8_K, d));
    for (int k = 0; k < 4; ++k) {
      const __m512i q = q4k_order(load64(y + offsetof(BlockQ8_K, qs) + 64 * k));
      _mm512_store_si512(p->qs + 64 * k, q);
      _mm512_store_si512(p->off + 32 * k, _mm512_slli_epi16(_mm512_maddubs_epi16(_mm512_set1_epi8(1), q), 2));
    }
  }
  // The accumulator's 128-bit lanes 0 + 1 hold classes 0-3, 2 + 3 classes 4-7.
  static constexpr int kFoldA = 0x88, kFoldB = 0xDD;
  FIXQ_GGUF_INLINE __m512i lanes(const std::byte* x, const Prepared& p, int32_t*) {
    // The 16 scales as bytes (ggml's 32-bit-word unpacking of q3_k_scale), minus 32, as
    // words in the order of the scale dwords: chunk m = 2h + j / 2 takes (s[4m], s[4m + 2])
    // in lanes with a = 0 and (s[4m + 1], s[4m + 3]) with a = 1. Dword m of the codes holds
    // the low nibbles of word m % 2 of scales (a0, a1; the high nibbles for m >= 2) and bits
    // 2m, 2m + 1 of each byte of t (scales[8..11]) at bits 4-5: [a0, a1, a0, a1] shifted
    // right by (0, 0, 4, 4), t rotated left by (4, 2, 0, -2), in four vector steps instead of
    // scalar ones.
    const std::byte* sc = x + offsetof(BlockQ3_K, scales);
    const __m128i a = _mm_set1_epi64x(load_as<long long>(sc)), t = _mm_set1_epi32(load_as<int>(sc + 8));
    const __m128i high = _mm_and_si128(_mm_rolv_epi32(t, _mm_setr_epi32(4, 2, 0, 30)), _mm_set1_epi8(0x30));
    const __m128i codes = _mm_ternarylogic_epi32(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 4, 4)), _mm_set1_epi8(0x0F), high,
                                                 0xEA);  // (A & B) | C
    const __m128i ordered = _mm_shuffle_epi8(_mm_sub_epi8(codes, _mm_set1_epi8(32)),
                                             _mm_setr_epi8(0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15));
    const __m512i sw = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(ordered));  // dword 2m: A, 2m + 1: B
    const Q4KChunks chunk;
    const __m512i hm = chunk(x + offsetof(BlockQ3_K, hmask));
    __m512i acc = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i q = chunk(x + offsetof(BlockQ3_K, qs) + 32 * h);
      for (int j = 0; j < 4; j += 2) {
        const int m = 2 * h + j / 2;
        const __m512i low = _mm512_and_si512(
            _mm512_srlv_epi16(q, _mm512_set1_epi32(2 * j | (2 * j + 2) << 16)), _mm512_set1_epi8(3));
        const __m512i bits = _mm512_set1_epi32(static_cast<int>(0x0101u * (1u << (4 * h + j)) | 0x01010000u * (1u << (4 * h + j + 1))));
        const __m512i u = _mm512_mask_add_epi8(low, _mm512_test_epi8_mask(hm, bits), low, _mm512_set1_epi8(4));
        const __m512i pairs = _mm512_sub_epi16(_mm512_maddubs_epi16(u, _mm512_load_si512(p.qs + 64 * m)),
                                               _mm512_load_si512(p.off + 32 * m));
        const __m512i scales = _mm512_permutexvar_epi32(  // lanes A, B, A, B
            _mm512_mask_blend_epi32(0xF0F0, _mm512_set1_epi32(2 * m), _mm512_set1_epi32(2 * m + 1)), sw);
        acc = _mm512_dpwssd_epi32(acc, pairs, scales);
      }
    }
    return acc;
  }
};

// Q5_K: as Q4_K plus a fifth bit per element, bit j (sub-block) of qh[l]. The AVX-512
// family's (the AVX512_VBMI family's is nibble_planes_avx512vbmi.h's).
struct Q5K : LanesFormat<Q5K> {
  using Block = BlockQ5_K;
  static constexpr std::size_t kBlockBytes = sizeof(Block);
  static constexpr int kOff = 0;
  static constexpr bool kMins = true;
  FIXQ_GGUF_INLINE __m512i lanes(const std::byte* x, const Q8KClasses& p, int32_t* min_term) {
    uint64_t sc, m;
    scales_mins_k4(x + offsetof(Block, scales), &sc, &m);
    *min_term = bsums_times_mins(p, m);
    const __m512i s = _mm512_zextsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(sc))));
    const __m512i qh = class_order(_mm512_castsi256_si512(load32(x + offsetof(Block, qh))), true);
    __m512i acc = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) {  // qs: 32 bytes per 64 elements
      const __m512i q = class_order(_mm512_castsi256_si512(load32(x + offsetof(Block, qs) + 32 * k)), true);
      __m512i u = _mm512_and_si512(_mm512_mask_srli_epi16(q, 0xFFFF0000u, q, 4), _mm512_set1_epi8(0x0F));
      const __m512i bits = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi8(static_cast<char>(1 << (2 * k))),
                                                   _mm512_set1_epi8(static_cast<char>(2 << (2 * k))));
      u = _mm512_mask_add_epi8(u, _mm512_test_epi8_mask(qh, bits), u, _mm512_set1_epi8(16));
      acc = accumulate(acc, u, p, k, scale_words32(s, 2 * k), false);
    }
    return acc;
  }
};

// Q6_K (BlockQ6_K: ql, qh, int8 scales, d); u = q + 32 (6 bits), sub-blocks of 16.
// Q6_K's high bits, moved to bits 4-5 of each qh byte (in class order, the same 32 bytes in
// both halves), the others zero: bits 4 half + (0, 1) in the lower 256 bits, 4 half + (2, 3)
// in the upper (the elements 0-31 and 32-63 of a 64-element chunk, half = 0 for the low
// nibbles' chunk, 1 for the high nibbles'). AVX512_VBMI family
// (which checks GFNI too): one vgf2p8affineqb, its per-qword bit matrix picking the two bits
// (output bit i reads matrix byte 7 - i), instead of a variable shift and an and.
FIXQ_GGUF_INLINE __m512i q6k_high_bits(__m512i qh, int half) {
#if defined(FIXQ_GGUF_VBMI)
  const auto row = [](int from) { return (1ll << from) << 24 | (2ll << from) << 16; };  // -> bits 4, 5
  const long long lo = row(4 * half), hi = row(4 * half + 2);
  return _mm512_gf2p8affine_epi64_epi8(qh, _mm512_setr_epi64(lo, lo, lo, lo, hi, hi, hi, hi), 0);
#else
  const __m512i shift = half == 0 ? _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi16(4), _mm512_set1_epi16(2))
                                  : _mm512_mask_blend_epi32(0xFF00, _mm512_setzero_si512(), _mm512_set1_epi16(2));
  const __m512i moved = half == 0 ? _mm512_sllv_epi16(qh, shift) : _mm512_srlv_epi16(qh, shift);
  return _mm512_and_si512(moved, _mm512_set1_epi8(0x30));
#endif
}

struct Q6K : LanesFormat<Q6K> {
  using Block = BlockQ6_K;
  static constexpr std::size_t kBlockBytes = sizeof(Block);
  static constexpr int kOff = 32;
  static constexpr bool kMins = false;
  FIXQ_GGUF_INLINE __m512i lanes(const std::byte* x, const Q8KClasses& p, int32_t*) {
    const __m512i s = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(load16(x + offsetof(BlockQ6_K, scales))));
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    __m512i acc = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      // Groups 4h + k, k = 0..3: k = 0, 1 from the low nibbles of ql[64h ..] and ql[64h + 32 ..]
      // with qh bits 0-1, 2-3; k = 2, 3 from their high nibbles with qh bits 4-5, 6-7.
      const __m512i ql = class_order(load64(x + offsetof(BlockQ6_K, ql) + 64 * h), false);
      const __m512i qh = class_order(_mm512_castsi256_si512(load32(x + offsetof(BlockQ6_K, qh) + 32 * h)), true);
      const __m512i u01 = _mm512_ternarylogic_epi32(ql, low4, q6k_high_bits(qh, 0), 0xEA);  // (ql & 15) | bits
      const __m512i u23 = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), low4, q6k_high_bits(qh, 1), 0xEA);
      acc = accumulate(acc, u01, p, 2 * h, scale_words16(s, 8 * h), true);
      acc = accumulate(acc, u23, p, 2 * h + 1, scale_words16(s, 8 * h + 4), true);
    }
    return acc;
  }
};

// ---- Q2_K, TQ1_0, TQ2_0: one term per super-block. Four super-blocks at a time: their
// integer partial sums reduced together (hsum4), their float terms formed in one vector,
// then added to the row's sum one by one, in order, as the reference does.

// Dword 0, 4, 8, 12 of v: each 128-bit lane's four dwords added (exact).
FIXQ_GGUF_INLINE __m128i lane_sums(__m512i v) {
  v = _mm512_add_epi32(v, _mm512_unpackhi_epi64(v, v));
  v = _mm512_add_epi32(v, _mm512_srli_epi64(v, 32));
  return _mm512_castsi512_si128(_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), v));
}

// The sums of the 16 int32 lanes of a, b, c, d: lanes 0-3 of the result (exact).
FIXQ_GGUF_INLINE __m128i hsum4(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i ab = _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, 0x44), _mm512_shuffle_i32x4(a, b, 0xEE));
  const __m512i cd = _mm512_add_epi32(_mm512_shuffle_i32x4(c, d, 0x44), _mm512_shuffle_i32x4(c, d, 0xEE));
  // 128-bit lane L: four partial sums of a, b, c, d.
  return lane_sums(_mm512_add_epi32(_mm512_shuffle_i32x4(ab, cd, 0x88), _mm512_shuffle_i32x4(ab, cd, 0xDD)));
}

// The fp16 at offset `at` of `count` consecutive blocks of `stride` bytes (the rest 0), as
// floats in lanes 0-3.
FIXQ_GGUF_INLINE __m128 fp16_of_4(const std::byte* x, std::size_t stride, std::size_t at, int count) {
  // Built in a register: four 2-byte stores read back as one vector would miss store
  // forwarding.
  __m128i h = _mm_setzero_si128();
  if (count > 0) h = _mm_insert_epi16(h, load_as<uint16_t>(x + at), 0);
  if (count > 1) h = _mm_insert_epi16(h, load_as<uint16_t>(x + stride + at), 1);
  if (count > 2) h = _mm_insert_epi16(h, load_as<uint16_t>(x + 2 * stride + at), 2);
  if (count > 3) h = _mm_insert_epi16(h, load_as<uint16_t>(x + 3 * stride + at), 3);
  return _mm_cvtph_ps(h);
}

// sumf += t[0], ..., t[count - 1], in order.
FIXQ_GGUF_INLINE float add_in_order(float sumf, __m128 t, int count) {
  if (count > 0) sumf += _mm_cvtss_f32(t);
  if (count > 1) sumf += _mm_cvtss_f32(_mm_movehdup_ps(t));
  if (count > 2) sumf += _mm_cvtss_f32(_mm_movehl_ps(t, t));
  if (count > 3) sumf += _mm_cvtss_f32(_mm_shuffle_ps(t, t, 3));
  return sumf;
}

// F: kBlockBytes; Quad (the prepared activations of four super-blocks) and prepare(y, count,
// Quad*) (count < 4 at the end: the rest zero); ints(x, y, quad, lane) (a super-block's
// integer partial sums), or ints4(x, quad, s) (the four super-blocks' at once, s[lane]);
// terms(x, y, quad, isum, count) (the float terms of `count` super-blocks from their
// integer sums, lanes 0-3).
template <class F>
struct QuadDriver {
  static void matvec(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
    static thread_local std::vector<typename F::Quad> quads_of_thread;
    auto& quads = cpu::thread_address(quads_of_thread);
    const auto nq = static_cast<std::size_t>((n + 3) / 4);
    if (quads.size() < nq) quads.resize(nq);
    for (std::size_t q = 0; q < nq; ++q)
      F::prepare(y + q * 4 * kQ8K, static_cast<int>(std::min<int64_t>(4, n - 4 * static_cast<int64_t>(q))), &quads[q]);
    const std::size_t row_bytes = static_cast<std::size_t>(n) * F::kBlockBytes;
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) dot_rows<4>(x + static_cast<std::size_t>(r) * row_bytes, row_bytes, y, n, quads.data(), out + r);
    for (; r + 2 <= rows; r += 2) dot_rows<2>(x + static_cast<std::size_t>(r) * row_bytes, row_bytes, y, n, quads.data(), out + r);
    if (r < rows) dot_rows<1>(x + static_cast<std::size_t>(r) * row_bytes, row_bytes, y, n, quads.data(), out + r);
  }

 private:
  template <int kCount>
  FIXQ_GGUF_INLINE float quad(const std::byte* x, const std::byte* y, const typename F::Quad& p, int count, float sumf) {
    __m512i s[4];
    if constexpr (requires(__m512i* v) { F::ints4(x, p, v); }) {  // the four blocks' sums together
      if constexpr (kCount == 4) {
        F::ints4(x, p, s);
      } else {  // a short quad: zero blocks after the row's last
        alignas(64) std::byte tail[4 * F::kBlockBytes] = {};
        std::memcpy(tail, x, static_cast<std::size_t>(count) * F::kBlockBytes);
        F::ints4(tail, p, s);
      }
    } else {
      for (int l = 0; l < 4; ++l)
        s[l] = l < (kCount ? kCount : count) ? F::ints(x + l * F::kBlockBytes, y + l * kQ8K, p, l) : _mm512_setzero_si512();
    }
    const int c = kCount ? kCount : count;
    return add_in_order(sumf, F::terms(x, y, p, hsum4(s[0], s[1], s[2], s[3]), c), c);
  }

  // R (1, 2 or 4) rows, row_bytes apart, quad by quad: a quad's chain (products,
  // reduction, terms, the in-order additions) is long and serial, and other rows' quads
  // beside it fill its gaps: two rows ran tq1_0 9%, q2_K 5% and tq2_0 4% faster than one,
  // four another 5%, 1% and 2.5% (Zen 5, alternated runs). Each row's sum takes its terms
  // in order, as alone.
  template <int R>
  static void dot_rows(const std::byte* x, std::size_t row_bytes, const std::byte* y, int64_t n,
                       const typename F::Quad* quads, float* out) {
    float sumf[R];
    for (int r = 0; r < R; ++r) sumf[r] = 0.0f;
    int64_t q = 0;
    for (; 4 * q + 4 <= n; ++q)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)  // unrolled: the rows' quads interleave
        sumf[r] = quad<4>(x + r * row_bytes + 4 * q * F::kBlockBytes, y + 4 * q * kQ8K, quads[q], 4, sumf[r]);
    if (4 * q < n)
      for (int r = 0; r < R; ++r)
        sumf[r] = quad<0>(x + r * row_bytes + 4 * q * F::kBlockBytes, y + 4 * q * kQ8K, quads[q], static_cast<int>(n - 4 * q),
                          sumf[r]);
    for (int r = 0; r < R; ++r) out[r] = sumf[r];
  }
};

// A Quad (qs[4][256], dy[4], ...) of `count` Q8_K super-blocks at y, the rest zero: their
// quants copied 64-byte aligned (no split loads) and their d; each(l, block) adds the rest.
template <class Quad, class Each>
void copy_quad(const std::byte* y, int count, Quad* p, Each each) {
  std::memset(p, 0, sizeof *p);
  for (int l = 0; l < count; ++l, y += kQ8K) {
    std::memcpy(p->qs[l], y + offsetof(BlockQ8_K, qs), kQK_K);
    p->dy[l] = load_as<float>(y + offsetof(BlockQ8_K, d));
    each(l, y);
  }
}

// Q2_K: isum = sum_j (sc_j & 15) * (q8 . codes of sub-block j), summs = bsums . (sc >> 4);
// sumf += dall * float(isum) - dmin * float(summs), dall = dy * dx, dmin = dy * dmin_x.
// Codes c <= 3 and scales s <= 15, so c * s <= 45 is an unsigned byte: vpshufb looks it up
// in a 4-entry table (0, s, 2s, 3s) of the code's sub-block and vpdpbusd multiplies it by
// q8 directly (no vpmaddubsw, no scale words).
struct Q2K {
  static constexpr std::size_t kBlockBytes = sizeof(BlockQ2_K);
  struct Quad {  // quants copied 64-byte aligned (no split loads); 128-bit lane L: super-block L's bsums 0-7 (bs_lo) and 8-15 (bs_hi)
    alignas(64) int8_t qs[4][kQK_K];
    alignas(64) int16_t bs_lo[32];
    alignas(64) int16_t bs_hi[32];
    alignas(16) float dy[4];
  };
  static void prepare(const std::byte* y, int count, Quad* p) {
    copy_quad(y, count, p, [p](int l, const std::byte* b) {
      std::memcpy(p->bs_lo + 8 * l, b + offsetof(BlockQ8_K, bsums), 16);
      std::memcpy(p->bs_hi + 8 * l, b + offsetof(BlockQ8_K, bsums) + 16, 16);
    });
  }
  FIXQ_GGUF_INLINE __m512i ints(const std::byte* x, const std::byte*, const Quad& p, int lane) {
    // Dword 4L + m of the tables: (0, s, 2s, 3s) of sub-block 4m + L (transposed, so that
    // chunk m finds its four sub-blocks' tables at bytes 4m..4m+3 of each 128-bit lane).
    const __m128i sc = _mm_shuffle_epi8(_mm_and_si128(load16(x + offsetof(BlockQ2_K, scales)), _mm_set1_epi8(0x0F)),
                                        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512i tables = _mm512_mullo_epi32(_mm512_cvtepu8_epi32(sc), _mm512_set1_epi32(0x03020100));
    const int8_t* q8 = p.qs[lane];
    __m512i acc = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {  // qs: 32 bytes per 128 elements
      const __m512i q = _mm512_broadcast_i64x4(load32(x + offsetof(BlockQ2_K, qs) + 32 * h));
      for (int j = 0; j < 4; j += 2) {  // elements 128h + 32j + (0..63): sub-blocks 8h + 2j + (0..3), one per lane
        const int m = 2 * h + j / 2;
        const __m512i shift = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi16(static_cast<short>(2 * j)),
                                                      _mm512_set1_epi16(static_cast<short>(2 * j + 2)));
        // index = (code & 3) | 4m
        const __m512i index = _mm512_ternarylogic_epi32(_mm512_srlv_epi16(q, shift), _mm512_set1_epi8(3),
                                                        _mm512_set1_epi8(static_cast<char>(4 * m)), 0xEA);
        acc = _mm512_dpbusd_epi32(acc, _mm512_shuffle_epi8(tables, index), _mm512_load_si512(q8 + 128 * h + 32 * j));
      }
    }
    return acc;
  }
  FIXQ_GGUF_INLINE __m128 terms(const std::byte* x, const std::byte*, const Quad& p, __m128i isum, int count) {
    __m512i h = _mm512_setzero_si512();  // lane L: super-block L's scales
    for (int l = 0; l < 4; ++l)
      if (l < count) h = _mm512_mask_broadcast_i32x4(h, static_cast<__mmask16>(0xF << (4 * l)), load16(x + l * kBlockBytes));
    const __m512i mins = _mm512_and_si512(_mm512_srli_epi16(h, 4), _mm512_set1_epi8(0x0F));
    const __m512i zero = _mm512_setzero_si512();
    // Two vpdpwssd chained from zero: both products and their sum in two instructions
    // (vpmaddwd twice and vpaddd would be three); mins <= 15: no wrap.
    const __m512i prod = _mm512_dpwssd_epi32(
        _mm512_dpwssd_epi32(zero, _mm512_unpacklo_epi8(mins, zero), _mm512_load_si512(p.bs_lo)),
        _mm512_unpackhi_epi8(mins, zero), _mm512_load_si512(p.bs_hi));
    const __m128i summs = lane_sums(prod);
    const __m128 dy = _mm_load_ps(p.dy);
    const __m128 dall = _mm_mul_ps(dy, fp16_of_4(x, kBlockBytes, offsetof(BlockQ2_K, d), count));
    const __m128 dmin = _mm_mul_ps(dy, fp16_of_4(x, kBlockBytes, offsetof(BlockQ2_K, dmin), count));
    return _mm_sub_ps(_mm_mul_ps(dall, _mm_cvtepi32_ps(isum)), _mm_mul_ps(dmin, _mm_cvtepi32_ps(summs)));
  }
};

// sum of a Q8_K block's 256 quants.
FIXQ_GGUF_INLINE int32_t q8k_sum(const std::byte* y) {
  __m512i acc = _mm512_setzero_si512();
  for (int k = 0; k < 4; ++k)  // qs, 64 at a time
    acc = _mm512_dpbusd_epi32(acc, _mm512_set1_epi8(1), load64(y + offsetof(BlockQ8_K, qs) + 64 * k));
  return hsum_i32(acc);
}

// TQ2_0: byte 32c + m holds element 128c + 32n + m at bits 2n; sumi = sum(code * y) - sum(y);
// sumf += float(sumi) * (dy * dx).
struct Tq2 {
  static constexpr std::size_t kBlockBytes = sizeof(BlockTq2_0);
  struct Quad {  // quants copied 64-byte aligned (no split loads)
    alignas(64) int8_t qs[4][kQK_K];
    alignas(16) int32_t sum[4];
    alignas(16) float dy[4];
  };
  static void prepare(const std::byte* y, int count, Quad* p) {
    copy_quad(y, count, p, [p](int l, const std::byte* b) { p->sum[l] = q8k_sum(b); });
  }
  FIXQ_GGUF_INLINE __m512i ints(const std::byte* x, const std::byte*, const Quad& p, int lane) {
    __m512i acc = _mm512_setzero_si512();
    const int8_t* q8 = p.qs[lane];
    for (int c = 0; c < 2; ++c) {  // qs: 32 bytes per 128 elements
      const __m512i q = _mm512_broadcast_i64x4(load32(x + offsetof(BlockTq2_0, qs) + 32 * c));
      for (int n0 = 0; n0 < 4; n0 += 2) {
        const __m512i shift = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi16(static_cast<short>(2 * n0)),
                                                      _mm512_set1_epi16(static_cast<short>(2 * n0 + 2)));
        const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(q, shift), _mm512_set1_epi8(3));
        acc = _mm512_dpbusd_epi32(acc, codes, _mm512_load_si512(q8 + 128 * c + 32 * n0));
      }
    }
    return acc;
  }
  FIXQ_GGUF_INLINE __m128 terms(const std::byte* x, const std::byte*, const Quad& p, __m128i isum, int count) {
    const __m128 sumi = _mm_cvtepi32_ps(_mm_sub_epi32(isum, _mm_load_si128(reinterpret_cast<const __m128i*>(p.sum))));
    return _mm_mul_ps(sumi, _mm_mul_ps(_mm_load_ps(p.dy), fp16_of_4(x, kBlockBytes, offsetof(BlockTq2_0, d), count)));
  }
};

// TQ1_0. With F_n(b) = floor(b * 3^n / 256), digit n of byte b is ((b * 3^n mod 256) * 3)
// >> 8 = F_(n+1)(b) - 3 F_n(b) (F_0 = 0 for a byte). So the sum over a byte's digits n of
// y_n * digit_n is sum over k >= 1 of F_k(b) * (y_(k-1) - 3 y_k), a linear form in the F_k,
// which vpmulhuw computes for 32 bytes at once (b * (3^k * 256) >> 16), and whose weights
// W_k = y_(k-1) - 3 y_k (|W| <= 512, int16) are prepared once per call. The sum is exact.
// Four super-blocks per QuadDriver step share one reduction (hsum4) and one float-term
// vector: with a full reduction and a scalar term per block, those took half the time.
// (Measured on Zen 5 against this: the digits as bytes for vpdpbusd, from byte additions
// and mask compares or from 16-bit additions, ran 25-40% slower.)
struct Tq1 {
  static constexpr std::size_t kBlockBytes = sizeof(BlockTq1_0);
  // The bytes come in three kinds of vectors, packed so that no multiply works on padding
  // (the qs[32..47] + qh words of one block filled 20 of 32 words): qs[0..31] of one block;
  // qs[32..47] of two blocks; qh of all four (16 words of a ymm, only n < 4: qh has four
  // digits). 68 vpmulhuw + vpdpwssd per four blocks instead of 80; masked adds put each
  // block's lanes into its own sum.
  struct Quad {
    alignas(64) int16_t w1[4][5][32];  // [l][k - 1]: block l's W_k for qs[0..31]
    alignas(64) int16_t w2[2][5][32];  // [h][k - 1]: qs[32..47] of block 2h (words 0-15), 2h + 1 (16-31)
    alignas(32) int16_t wh[4][16];     // [k - 1]: qh[j] of block l at word 4l + j
    alignas(16) int32_t sum[4];
    alignas(16) float dy[4];
  };
  static void prepare(const std::byte* y, int count, Quad* p) {
    std::memset(p, 0, sizeof *p);
    for (int l = 0; l < count; ++l, y += kQ8K) {
      const auto* q = reinterpret_cast<const int8_t*>(y + offsetof(BlockQ8_K, qs));
      for (int k = 1; k <= 5; ++k) {
        for (int m = 0; m < 32; ++m)  // element 32n + m is digit n of qs[m]
          p->w1[l][k - 1][m] = static_cast<int16_t>(q[32 * (k - 1) + m] - (k <= 4 ? 3 * q[32 * k + m] : 0));
        for (int m = 0; m < 16; ++m)  // element 160 + 16n + m is digit n of qs[32 + m]
          p->w2[l / 2][k - 1][16 * (l % 2) + m] =
              static_cast<int16_t>(q[160 + 16 * (k - 1) + m] - (k <= 4 ? 3 * q[160 + 16 * k + m] : 0));
        if (k <= 4)
          for (int j = 0; j < 4; ++j)  // element 240 + 4n + j is digit n (< 4) of qh[j]
            p->wh[k - 1][4 * l + j] = static_cast<int16_t>(q[240 + 4 * (k - 1) + j] - (k <= 3 ? 3 * q[240 + 4 * k + j] : 0));
      }
      p->sum[l] = q8k_sum(y);
      p->dy[l] = load_as<float>(y + offsetof(BlockQ8_K, d));
    }
  }
  // sum(digit * y) of four blocks at x (all readable; QuadDriver pads a short quad with
  // zero blocks, whose digits are 0), into lanes of s[l] (terms() subtracts sum(y)).
  FIXQ_GGUF_INLINE void ints4(const std::byte* x, const Quad& p, __m512i* s) {
    const auto qs = [&](int l) { return x + l * kBlockBytes + offsetof(BlockTq1_0, qs); };
    const auto qh = [&](int l) { return load_as<int>(x + l * kBlockBytes + offsetof(BlockTq1_0, qh)); };
    __m512i b1[4], b2[2], acc1[4], acc2[2];
    for (int l = 0; l < 4; ++l) b1[l] = _mm512_cvtepu8_epi16(load32(qs(l))), acc1[l] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h)
      b2[h] = _mm512_cvtepu8_epi16(_mm256_set_m128i(load16(qs(2 * h + 1) + 32), load16(qs(2 * h) + 32))),
      acc2[h] = _mm512_setzero_si512();
    const __m256i bh = _mm256_cvtepu8_epi16(_mm_setr_epi32(qh(0), qh(1), qh(2), qh(3)));
    __m256i acch = _mm256_setzero_si256();
    int pow3 = 3;
    for (int k = 0; k < 5; ++k, pow3 *= 3) {
      const __m512i f = _mm512_set1_epi16(static_cast<short>(pow3 * 256));
      for (int l = 0; l < 4; ++l) acc1[l] = _mm512_dpwssd_epi32(acc1[l], _mm512_mulhi_epu16(b1[l], f), _mm512_load_si512(p.w1[l][k]));
      for (int h = 0; h < 2; ++h) acc2[h] = _mm512_dpwssd_epi32(acc2[h], _mm512_mulhi_epu16(b2[h], f), _mm512_load_si512(p.w2[h][k]));
      if (k < 4)
        acch = _mm256_dpwssd_epi32(acch, _mm256_mulhi_epu16(bh, _mm512_castsi512_si256(f)),
                                   _mm256_load_si256(reinterpret_cast<const __m256i*>(p.wh[k])));
    }
    const __m512i h = _mm512_zextsi256_si512(acch);  // dwords 2l, 2l + 1: block l
    for (int l = 0; l < 4; ++l)
      s[l] = _mm512_add_epi32(_mm512_mask_add_epi32(acc1[l], l % 2 ? 0xFF00 : 0x00FF, acc1[l], acc2[l / 2]),
                              _mm512_maskz_mov_epi32(static_cast<__mmask16>(3u << (2 * l)), h));
  }
  // sumf += float(sumi) * (dx * dy)
  FIXQ_GGUF_INLINE __m128 terms(const std::byte* x, const std::byte*, const Quad& p, __m128i isum, int count) {
    const __m128 sumi = _mm_cvtepi32_ps(_mm_sub_epi32(isum, _mm_load_si128(reinterpret_cast<const __m128i*>(p.sum))));
    return _mm_mul_ps(sumi, _mm_mul_ps(fp16_of_4(x, kBlockBytes, offsetof(BlockTq1_0, d), count), _mm_load_ps(p.dy)));
  }
};

// ---- IQ4_XS through the interleaved-rows driver: two super-blocks (16 terms) per call.

struct Iq4XsBlocks {
  alignas(64) int8_t qs[2][kQK_K];
  alignas(64) int32_t sum[16];  // sum of each 32 quants
  float d[2];
};

struct Iq4Xs {
  static constexpr std::size_t kBlockBytes = sizeof(BlockIq4Xs);
  static constexpr int kChunk = 2, kTerms = 8;
  using Prepared = Iq4XsBlocks;
  static void prepare(const std::byte* y, int64_t chunk, int64_t blocks, Prepared* p) {
    y += static_cast<std::size_t>(chunk) * 2 * kQ8K;
    __m512i s[8];
    for (int b = 0; b < 2; ++b, y += kQ8K) {
      if (b < blocks) {
        std::memcpy(p->qs[b], y + offsetof(BlockQ8_K, qs), kQK_K);
        p->d[b] = load_as<float>(y + offsetof(BlockQ8_K, d));
      } else {
        std::memset(p->qs[b], 0, kQK_K);
        p->d[b] = 0.0f;
      }
      for (int k = 0; k < 4; ++k)
        s[4 * b + k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), _mm512_load_si512(p->qs[b] + 64 * k));
    }
    _mm512_store_si512(p->sum, sum_lanes_8x2(s));
  }
  // per sub-block: sumf += (d4d8 * float(ls - 32)) * float(sumi), d4d8 = dx * dy
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    __m512i s[8];
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 4; ++k) {  // qs: 32 bytes per two sub-blocks
        const std::byte* qs = x + b * kBlockBytes + offsetof(BlockIq4Xs, qs);
        const __m512i z = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3),
                                                   _mm512_castsi256_si512(load32(qs + 32 * k)));
        const __m512i codes = _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4), _mm512_set1_epi8(0x0F));
        s[4 * b + k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lookup16(kIq4nlPlus128.b, codes),
                                           _mm512_load_si512(p.qs[b] + 64 * k));
      }
    const __m512i sumi = _mm512_sub_epi32(sum_lanes_8x2(s), _mm512_slli_epi32(_mm512_load_si512(p.sum), 7));
    return iq4_xs_pair_terms(x, kBlockBytes, sumi, p.d[0], p.d[1]);
  }
};

// One row's dot product through a driver's (or a type's own) matvec.
template <class Driver>
float dot_one(const std::byte* x, const std::byte* y, int64_t n) {
  float r;
  Driver::matvec(x, 1, n, y, &r);
  return r;
}

}  // namespace

}  // namespace fixq::gguf::detail

// A family's exported dot_<x>_q8_k and matvec_<x>_q8_k through driver D (its matvec; the dot
// is its one-row case), for use inside the family's namespace.
#define FIXQ_GGUF_KQUANT_KERNELS(x, D)                                                           \
  float dot_##x##_q8_k(const std::byte* a, const std::byte* b, int64_t n) { return dot_one<D>(a, b, n); } \
  void matvec_##x##_q8_k(const std::byte* a, int64_t rows, int64_t n, const std::byte* b, float* out) {  \
    D::matvec(a, rows, n, b, out);                                                                \
  }
