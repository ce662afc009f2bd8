// AVX-512 VNNI micro-kernels, 6 rows x 64 columns (24 zmm accumulators, 4 for B).
//   8-bit A x s8 B: vpdpbusd adds four u8 x s8 products into each int32 lane, exactly (no
//     int16 intermediate, no saturation: the driver keeps every sum inside int32). s8 A
//     arrives shifted to u8 (+128, APacking::Quads8) and the driver starts each column at
//     -128 * colsum[n].
//   int16 pairs x s8 / s16 B: vpdpwssd adds two int16 x int16 products per lane; s8
//     weights stay one byte in memory and are widened in registers.
// For one or two rows (a GEMV, a GRU step at batch 1) the k-groups alternate between two
// sets of accumulators, so that eight independent chains hide vpdpbusd's latency.
#include "cpu/x86.h"

#include <cstring>

#include "gemm/kernels.h"

namespace fixq::gemm_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

constexpr int kMr = 6, kNr = 64;
constexpr int64_t kKcBytes = 128 * 1024;

// Writes (or adds) the real columns of one row of 4 accumulator vectors.
[[gnu::always_inline]] inline void store_row(const TileArgs& t, int r, const __m512i (&acc)[4]) {
  int32_t* c = t.c + r * t.ldc;
  for (int v = 0; v < 4; ++v) {
    const int left = t.cols - 16 * v;
    if (left <= 0) break;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
    __m512i x = acc[v];
    if (t.accumulate) {
      x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(m, c + 16 * v));
    } else if (t.init != nullptr) {
      x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(m, t.init + 16 * v));
    }
    _mm512_mask_storeu_epi32(c + 16 * v, m, x);
  }
}

int32_t load4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The group's four B vectors (16 columns x kr values each).
template <bool Quads, bool B16>
[[gnu::always_inline]] inline void load_b(const int8_t* b, int64_t g, __m512i (&w)[4]) {
  if constexpr (Quads || B16) {
    const int8_t* p = b + g * kNr * 4;  // 64 columns x 4 bytes
    for (int v = 0; v < 4; ++v) w[v] = _mm512_loadu_si512(p + 64 * v);
  } else {
    const int8_t* p = b + g * kNr * 2;  // 64 columns x 2 int8, widened to int16 pairs
    for (int v = 0; v < 4; ++v) w[v] = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * v)));
  }
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
// L3 loses 15% without it).
template <bool Quads, bool B16>
[[gnu::always_inline]] inline void prefetch_b(const int8_t* b, int64_t g) {
  const char* ahead = reinterpret_cast<const char*>(b) + (g + 8) * kNr * (Quads || B16 ? 4 : 2);
#pragma GCC unroll 4
  for (int v = 0; v < (Quads || B16 ? 4 : 2); ++v) _mm_prefetch(ahead + 64 * v, _MM_HINT_T0);
}

// One k-group into one set of accumulators: four B vectors, MR broadcasts of A.
template <int MR, bool Quads, bool B16>
[[gnu::always_inline]] inline void step(__m512i (&acc)[MR][4], const char* a, const int8_t* b, int64_t g) {
  __m512i w[4];
  load_b<Quads, B16>(b, g, w);
  prefetch_b<Quads, B16>(b, g);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    // Both A layouts hold 4 bytes per row and group: 4 u8 or 2 int16.
    const __m512i av = _mm512_set1_epi32(load4(a + (g * kMr + r) * 4));
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[r][v] = madd<Quads>(acc[r][v], av, w[v]);
  }
}

// Quads: vpdpbusd on Quads8 A; else vpdpwssd on Pairs16 A (B16: s16 weights). Two sets of
// accumulators (TWO) for one or two rows: even and odd groups, added at the end.
template <int MR, bool TWO, bool Quads, bool B16>
void tile(const TileArgs& t) {
  __m512i acc[MR][4], odd[MR][4];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[r][v] = odd[r][v] = _mm512_setzero_si512();
  const auto* a = static_cast<const char*>(t.a);
  const auto* b = static_cast<const int8_t*>(t.b);
  // The tile of C is read and written at the end: fetch it while the sums run.
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < 4; ++v) _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc + 16 * v), _MM_HINT_T0);
  int64_t g = 0;
  if constexpr (TWO) {
    for (; g + 2 <= t.groups; g += 2) {
      step<MR, Quads, B16>(acc, a, b, g);
      step<MR, Quads, B16>(odd, a, b, g + 1);
    }
  }
  for (; g < t.groups; ++g) step<MR, Quads, B16>(acc, a, b, g);
  if constexpr (TWO) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_add_epi32(acc[r][v], odd[r][v]);
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) store_row(t, r, acc[r]);
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
    prefetch_b<Quads, B16>(b, g);
    prefetch_b<Quads, B16>(b, g + 1);
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
  store_row(t, 0, acc);
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

constexpr MicroKernel kDot8{"avx512 vpdpbusd u8 x s8, 6 x 64", kMr, APacking::Quads8, {4, 1, kNr, false},
                            run<true, false>, kKcBytes};
constexpr MicroKernel kPairsB8{"avx512 vpdpwssd int16 pairs x s8, 6 x 64", kMr, APacking::Pairs16,
                               {2, 1, kNr, false}, run<false, false>, kKcBytes};
constexpr MicroKernel kPairsB16{"avx512 vpdpwssd int16 pairs x s16, 6 x 64", kMr, APacking::Pairs16,
                                {2, 2, kNr, false}, run<false, true>, kKcBytes};

}  // namespace

extern const GemmKernels kGemm;
const GemmKernels kGemm{&kDot8, &kDot8, &kPairsB8, &kPairsB16};

}  // namespace fixq::gemm_detail::FIXQ_KERNEL_NS(avx512)
