// AVX-512 VNNI micro-kernels, 6 rows x 64 columns (24 zmm accumulators, 4 for B).
//   8-bit A x s8 B: vpdpbusd adds four u8 x s8 products into each int32 lane, exactly (no
//     int16 intermediate, no saturation: the driver keeps every sum inside int32). s8 A
//     arrives shifted to u8 (+128, APacking::Quads8) and the driver starts each column at
//     -128 * colsum[n].
//   s16 A x s8 B: vpdpbusd on A's two byte planes (APacking::Split16), the low bytes and
//     the high bytes plus 128, each plane in its own accumulators; the tile's store forms
//     256 * high + low in int64. Twice the vpdpbusd of 8-bit A, but 64 products each and no
//     widening of B: the GEMV of a 16-bit GRU step reads its weights once, as at 8 bits,
//     where vpdpwssd took 32-byte loads and a vpmovsxbw per 32 weights.
//   int16 pairs x s16 B: vpdpwssd adds two int16 x int16 products per lane.
// For one or two rows (a GEMV, a GRU step at batch 1) the k-groups alternate between two
// sets of accumulators, so that eight independent chains hide vpdpbusd's latency.
#include "cpu/x86.h"

#include <cstring>

#include "gemm/kernels.h"
#include "gemm/planes_avx512.h"

namespace fixq::gemm_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

constexpr int kMr = 6, kNr = 64;
constexpr int64_t kKcBytes = 128 * 1024;

// first_lanes: gemm/planes_avx512.h.
// The real columns of `cols` as a mask of vector v's 16 lanes.
[[gnu::always_inline]] inline __mmask16 column_mask(int cols, int v) { return first_lanes(cols - 16 * v); }

// Writes (or adds) the real columns of one row of 4 accumulator vectors: acc + C when
// accumulating, else acc + init (init: TileArgs::init, or null where the accumulators
// started from it).
[[gnu::always_inline]] inline void store_row(const TileArgs& t, int r, const __m512i (&acc)[4], const int32_t* init) {
  int32_t* c = t.c + r * t.ldc;
  for (int v = 0; v < 4; ++v) {
    if (16 * v >= t.cols) break;
    const __mmask16 m = column_mask(t.cols, v);
    __m512i x = acc[v];
    if (t.accumulate) {
      x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(m, c + 16 * v));
    } else if (init != nullptr) {
      x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(m, init + 16 * v));
    }
    _mm512_mask_storeu_epi32(c + 16 * v, m, x);
  }
}

// Split16: A row r's columns from its plane sums (gemm/planes_avx512.h).
[[gnu::always_inline]] inline void store_split(const TileArgs& t, int r, const __m512i (&lo)[4],
                                               const __m512i (&hi)[4]) {
  for (int v = 0; v < 4; ++v) store_plane_sums(t, r, 16 * v, lo[v], hi[v]);
}

int32_t load4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The group's four B vectors (16 columns x 4 bytes: four int8 or two int16 weights each).
template <bool Quads, bool B16>
[[gnu::always_inline]] inline void load_b(const int8_t* b, int64_t g, __m512i (&w)[4]) {
  static_assert(Quads || B16, "int16 A with int8 B takes the byte planes (Split16)");
  const int8_t* p = b + g * kNr * 4;
  for (int v = 0; v < 4; ++v) w[v] = _mm512_loadu_si512(p + 64 * v);
}

template <bool Quads>
__m512i madd(__m512i acc, __m512i a, __m512i b) {
#if !defined(FIXQ_EMULATE_X86) && defined(__GNUC__)
  // The instruction itself, accumulating in place: with the intrinsics, GCC 12 copied each
  // accumulator to a fresh register and back on every iteration of the one-row loop
  // (llvm-mca-14 -mcpu=icelake-server: 16 cycles per pair of k-groups with the copies, 9
  // without, bound by the load ports; Ice Lake's move elimination is disabled by erratum).
  if constexpr (Quads) asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  else asm("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
#else
  if constexpr (Quads) return _mm512_dpbusd_epi32(acc, a, b);
  else return _mm512_dpwssd_epi32(acc, a, b);
#endif
}

// B streams from L2 (kc_bytes): fetch a few groups ahead (a GEMV whose weights come from
// L3 lost 15% without it on Zen 5). The one-row kernel fetches only where B comes from L3
// (TileArgs::b_from_l3): from L2 the fetches cost it 7-8% (Intel Xeon, 1 x 768 x 256 1.39
// against 1.28 us, 1 x 1536 x 512 5.2 against 4.8; from L3 1 x 3072 x 1024 the same).
template <bool Quads, bool B16>
[[gnu::always_inline]] inline void prefetch_b(const int8_t* b, int64_t g) {
  const char* ahead = reinterpret_cast<const char*>(b) + (g + 8) * kNr * 4;
#pragma GCC unroll 4
  for (int v = 0; v < 4; ++v) _mm_prefetch(ahead + 64 * v, _MM_HINT_T0);
}

// One k-group into one set of accumulators: four B vectors, MR broadcasts of A.
template <int MR, bool Quads, bool B16, bool Prefetch = true>
[[gnu::always_inline]] inline void step(__m512i (&acc)[MR][4], const char* a, const int8_t* b, int64_t g) {
  __m512i w[4];
  load_b<Quads, B16>(b, g, w);
  if constexpr (Prefetch) prefetch_b<Quads, B16>(b, g);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    // Both A layouts hold 4 bytes per row and group: 4 u8 or 2 int16.
    const __m512i av = _mm512_set1_epi32(load4(a + (g * kMr + r) * 4));
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[r][v] = madd<Quads>(acc[r][v], av, w[v]);
  }
}

// Quads: vpdpbusd on Quads8 or Split16 A; else vpdpwssd on Pairs16 A (B16: s16 weights).
// Two sets of accumulators (TWO) for one or two packed rows: even and odd groups, added at
// the end. Split: the MR packed rows are MR / 2 rows of A in byte planes (store_split).
template <int MR, bool TWO, bool Quads, bool B16, bool Split = false>
void tile(const TileArgs& t) {
  __m512i acc[MR][4], odd[MR][4];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[r][v] = odd[r][v] = _mm512_setzero_si512();
  // A tile that starts its columns at init (not accumulating) sums from it: four loads
  // instead of a load and an addition per row and vector at the end. The same integers (the
  // driver keeps every running sum inside int32); 64 k-groups, a GRU's K = 256, run 5%
  // faster per tile (Intel Xeon, 40 tiles from L2).
  const bool from_init = !Split && !t.accumulate && t.init != nullptr;
  if constexpr (!Split) {
    if (from_init) {
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        if (16 * v >= t.cols) break;  // no address past the tile's columns is formed
        const __m512i start = _mm512_maskz_loadu_epi32(column_mask(t.cols, v), t.init + 16 * v);
#pragma GCC unroll 6
        for (int r = 0; r < MR; ++r) acc[r][v] = start;
      }
    }
  }
  const auto* a = static_cast<const char*>(t.a);
  const auto* b = static_cast<const int8_t*>(t.b);
  // The tile of C is read and written at the end: fetch it while the sums run.
  if constexpr (Split) {
    for (int r = 0; r < MR / 2; ++r)
      for (int v = 0; v < 8; ++v)
        _mm_prefetch(t.c64 != nullptr ? reinterpret_cast<const char*>(t.c64 + r * t.ldc + 8 * v)
                                      : reinterpret_cast<const char*>(t.c + r * t.ldc + 8 * v),
                     _MM_HINT_T0);
  } else {
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < 4; ++v) _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc + 16 * v), _MM_HINT_T0);
  }
  int64_t g = 0;
  if constexpr (TWO) {
    // One or two packed rows are bound by the load ports (four B loads per four or eight
    // vpdpbusd): as in row1, the prefetches only where B comes from L3.
    if (t.b_from_l3) {
      for (; g + 2 <= t.groups; g += 2) {
        step<MR, Quads, B16>(acc, a, b, g);
        step<MR, Quads, B16>(odd, a, b, g + 1);
      }
    } else {
      for (; g + 2 <= t.groups; g += 2) {
        step<MR, Quads, B16, false>(acc, a, b, g);
        step<MR, Quads, B16, false>(odd, a, b, g + 1);
      }
    }
  }
  for (; g < t.groups; ++g) step<MR, Quads, B16>(acc, a, b, g);
  if constexpr (TWO) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_add_epi32(acc[r][v], odd[r][v]);
  }
  if constexpr (Split) {
#pragma GCC unroll 3
    for (int r = 0; r < MR / 2; ++r) store_split(t, r, acc[2 * r], acc[2 * r + 1]);
  } else {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) store_row(t, r, acc[r], from_init ? nullptr : t.init);
  }
}

// One row (a GEMV, a GRU step at batch 1): eight named accumulators, even groups into
// the first four and odd ones into the others, so the compiler keeps every chain in its
// own register (the array form of tile<1, true> copied registers on every iteration, and
// those copies lengthened the chains; see madd).
template <bool Quads, bool B16>
void row1(const TileArgs& t) {
  __m512i e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0, o0 = e0, o1 = e0, o2 = e0, o3 = e0;
  const auto* a = static_cast<const char*>(t.a);
  const auto* b = static_cast<const int8_t*>(t.b);
  for (int v = 0; v < 4; ++v) _mm_prefetch(reinterpret_cast<const char*>(t.c + 16 * v), _MM_HINT_T0);
  int64_t g = 0;
  for (; g + 2 <= t.groups; g += 2) {
    __m512i w[4], x[4];
    load_b<Quads, B16>(b, g, w);
    load_b<Quads, B16>(b, g + 1, x);
    if (t.b_from_l3) {
      prefetch_b<Quads, B16>(b, g);
      prefetch_b<Quads, B16>(b, g + 1);
    }
    const __m512i av = _mm512_set1_epi32(load4(a + g * kMr * 4));
    const __m512i bv = _mm512_set1_epi32(load4(a + (g + 1) * kMr * 4));
    e0 = madd<Quads>(e0, av, w[0]);
    e1 = madd<Quads>(e1, av, w[1]);
    e2 = madd<Quads>(e2, av, w[2]);
    e3 = madd<Quads>(e3, av, w[3]);
    o0 = madd<Quads>(o0, bv, x[0]);
    o1 = madd<Quads>(o1, bv, x[1]);
    o2 = madd<Quads>(o2, bv, x[2]);
    o3 = madd<Quads>(o3, bv, x[3]);
  }
  if (g < t.groups) {
    __m512i w[4];
    load_b<Quads, B16>(b, g, w);
    const __m512i av = _mm512_set1_epi32(load4(a + g * kMr * 4));
    e0 = madd<Quads>(e0, av, w[0]);
    e1 = madd<Quads>(e1, av, w[1]);
    e2 = madd<Quads>(e2, av, w[2]);
    e3 = madd<Quads>(e3, av, w[3]);
  }
  const __m512i acc[4] = {_mm512_add_epi32(e0, o0), _mm512_add_epi32(e1, o1), _mm512_add_epi32(e2, o2),
                          _mm512_add_epi32(e3, o3)};
  store_row(t, 0, acc, t.init);
}

template <bool Quads, bool B16>
void run(const TileArgs& t) {
  switch (t.rows) {
    case 1: row1<Quads, B16>(t); break;
    case 2: tile<2, true, Quads, B16>(t); break;
    case 3: tile<3, false, Quads, B16>(t); break;
    case 4: tile<4, false, Quads, B16>(t); break;
    case 5: tile<5, false, Quads, B16>(t); break;
    default: tile<6, false, Quads, B16>(t); break;
  }
}

// s16 A in byte planes: one, two or three rows of A (two, four or six packed rows).
void run_split(const TileArgs& t) {
  switch (t.rows) {
    case 1: tile<2, true, true, false, true>(t); break;
    case 2: tile<4, false, true, false, true>(t); break;
    default: tile<6, false, true, false, true>(t); break;
  }
}

// The last fields: no begin(), the driver's sharing threshold, reverse_within_l2 (kernels.h).
constexpr MicroKernel kDot8{"avx512 vpdpbusd u8 x s8, 6 x 64", kMr, APacking::Quads8, {4, 1, kNr, false},
                            run<true, false>, kKcBytes, nullptr, 0, true};
constexpr MicroKernel kSplit16{"avx512 vpdpbusd s16 as two byte planes x s8, 3 x 64", kMr, APacking::Split16,
                               {4, 1, kNr, false}, run_split, kKcBytes, nullptr, 0, true};
constexpr MicroKernel kPairsB16{"avx512 vpdpwssd int16 pairs x s16, 6 x 64", kMr, APacking::Pairs16,
                                {2, 2, kNr, false}, run<false, true>, kKcBytes, nullptr, 0, true};

}  // namespace

FIXQ_KERNEL_TABLE(GemmKernels, kGemm, Isa::Avx512){&kDot8, &kDot8, &kSplit16, &kPairsB16};

}  // namespace fixq::gemm_detail::FIXQ_KERNEL_NS(avx512)
