// NEON (Armv8.0 Advanced SIMD) micro-kernels.
//   int16 pairs x s8 / s16, 4 x 16: the A layout of the scalar and AVX2 kernels (Pairs16:
//     u8, s8 and s16 A as int16, two k per group). Per group, B's 16 columns x 2 weights
//     widen to int16 (SXTL) and each row's pair, broadcast, multiplies them into int32
//     products (SMULL / SMULL2); ADDP adds each column's two products, the AVX2 kernel's
//     vpmaddwd in two steps. Every product and pair sum is an exact int32 (|a| <= 2^15,
//     |b| <= 2^15 with u8/s8 A, |b| <= 2^7 with s16 A; S16 x S16 is not a supported pair),
//     and the driver keeps the block's running sums inside int32, so the tile is the
//     scalar reference's integers bit for bit.
#include <arm_neon.h>

#include <cstring>

#include "gemm/kernels.h"

namespace fixq::gemm_detail::neon {

namespace {

constexpr int kNr16 = 16;
constexpr int64_t kKcBytes = 32 * 1024;  // B panel blocks stay in L1

// Writes (or adds) the real part of one row's 16 accumulator lanes.
[[gnu::always_inline]] inline void store_row(const TileArgs& t, int r, const int32x4_t (&acc)[4]) {
  int32_t* c = t.c + r * t.ldc;
  int32_t tmp[kNr16];
  for (int v = 0; v < 4; ++v) vst1q_s32(tmp + 4 * v, acc[v]);
  if (t.accumulate) {
    for (int j = 0; j < t.cols; ++j) c[j] += tmp[j];
  } else if (t.init != nullptr) {
    for (int j = 0; j < t.cols; ++j) c[j] = t.init[j] + tmp[j];
  } else {
    std::memcpy(c, tmp, static_cast<size_t>(t.cols) * sizeof(int32_t));
  }
}

// B's group g: 16 columns x 2 weights as four int16x8 (columns 4v .. 4v + 3, pairs adjacent).
template <bool B16>
[[gnu::always_inline]] inline void load_b(const void* b, int64_t g, int16x8_t (&bv)[4]) {
  if constexpr (B16) {
    const auto* p = static_cast<const int16_t*>(b) + g * kNr16 * 2;
    for (int v = 0; v < 4; ++v) bv[v] = vld1q_s16(p + 8 * v);
  } else {
    const auto* p = static_cast<const int8_t*>(b) + g * kNr16 * 2;
    const int8x16_t lo = vld1q_s8(p), hi = vld1q_s8(p + 16);
    bv[0] = vmovl_s8(vget_low_s8(lo));
    bv[1] = vmovl_high_s8(lo);
    bv[2] = vmovl_s8(vget_low_s8(hi));
    bv[3] = vmovl_high_s8(hi);
  }
}

template <int MR, bool B16>
void pairs_tile(const TileArgs& t) {
  int32x4_t acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < 4; ++v) acc[r][v] = vdupq_n_s32(0);
  const auto* a = static_cast<const char*>(t.a);
  for (int64_t g = 0; g < t.groups; ++g) {
    int16x8_t bv[4];
    load_b<B16>(t.b, g, bv);
    for (int r = 0; r < MR; ++r) {
      // The 4-row micro-panel: the pair (g, r) is the 32 bits at (g * 4 + r) * 4.
      int32_t pair;
      std::memcpy(&pair, a + (g * 4 + r) * 4, sizeof pair);
      const int16x8_t av = vreinterpretq_s16_s32(vdupq_n_s32(pair));
      for (int v = 0; v < 4; ++v) {
        const int32x4_t p0 = vmull_s16(vget_low_s16(bv[v]), vget_low_s16(av));  // columns 4v, 4v + 1
        const int32x4_t p1 = vmull_high_s16(bv[v], av);                          // columns 4v + 2, 4v + 3
        acc[r][v] = vaddq_s32(acc[r][v], vpaddq_s32(p0, p1));
      }
    }
  }
  for (int r = 0; r < MR; ++r) store_row(t, r, acc[r]);
}

template <bool B16>
void pairs(const TileArgs& t) {
  switch (t.rows) {
    case 1: pairs_tile<1, B16>(t); break;
    case 2: pairs_tile<2, B16>(t); break;
    case 3: pairs_tile<3, B16>(t); break;
    default: pairs_tile<4, B16>(t); break;
  }
}

constexpr MicroKernel kPairsB8{"neon smull/addp int16 pairs x s8, 4 x 16", 4, APacking::Pairs16, {2, 1, kNr16, false},
                               pairs<false>, kKcBytes};
constexpr MicroKernel kPairsB16{"neon smull/addp int16 pairs x s16, 4 x 16", 4, APacking::Pairs16,
                                {2, 2, kNr16, false}, pairs<true>, kKcBytes};

}  // namespace

FIXQ_KERNEL_TABLE(GemmKernels, kGemm, Isa::Neon){&kPairsB8, &kPairsB8, &kPairsB8, &kPairsB16};

}  // namespace fixq::gemm_detail::neon
