// Private, for the AVX-512 GEMM kernel files (kernels_avx512.cpp, kernels_amx.cpp) only:
// the one statement of how an s16 x s8 tile is formed from its two byte planes' int32 sums
// (APacking::Split16, TilesSplit16): 256 * hi + lo. Each file compiles its own copy
// with its own flags (internal linkage), as gru/int/fast/step.h does.
#pragma once

#include "gemm/kernels.h"

namespace fixq::gemm_detail {
namespace {

// The first n of 16 lanes (none for n <= 0, all for n >= 16); the AVX-512 kernels' masks too.
[[gnu::always_inline]] inline __mmask16 first_lanes(int n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}

// Writes the tile's columns [col, col + 16) of A row r (those below t.cols) from the plane
// sums lo (low bytes) and hi (high bytes: plus 128 for Split16, as they are for
// TilesSplit16): 256 * hi + lo plus C (accumulate) or the start values at col
// (TileArgs::init64 / init, where set). To c64 in int64 (int64 lanes move under int32 masks,
// two bits each); to C in wrapping int32 lanes, where the driver uses int32 C only when every
// running sum fits, so the value, exact modulo 2^32, is exact (256 * hi alone may not fit).
[[gnu::always_inline]] inline void store_plane_sums(const TileArgs& t, int r, int col, __m512i lo, __m512i hi) {
  const int left = t.cols - col;
  if (left <= 0) return;
  const int64_t at = r * t.ldc + col;
  if (t.c64 != nullptr) {
    auto combine = [&](int h) {
      const __m256i l = h ? _mm512_extracti64x4_epi64(lo, 1) : _mm512_castsi512_si256(lo);
      const __m256i u = h ? _mm512_extracti64x4_epi64(hi, 1) : _mm512_castsi512_si256(hi);
      return _mm512_add_epi64(_mm512_slli_epi64(_mm512_cvtepi32_epi64(u), 8), _mm512_cvtepi32_epi64(l));
    };
    __m512i x0 = combine(0), x1 = combine(1);
    // The second eight columns only where they exist (their address may not be formed).
    const __mmask16 m0 = first_lanes(2 * left), m1 = first_lanes(2 * (left - 8));
    const int64_t* base = t.accumulate ? t.c64 + at : t.init64 != nullptr ? t.init64 + col : nullptr;
    if (base != nullptr) {
      x0 = _mm512_add_epi64(x0, _mm512_maskz_loadu_epi32(m0, base));
      if (left > 8) x1 = _mm512_add_epi64(x1, _mm512_maskz_loadu_epi32(m1, base + 8));
    }
    _mm512_mask_storeu_epi32(t.c64 + at, m0, x0);
    if (left > 8) _mm512_mask_storeu_epi32(t.c64 + at + 8, m1, x1);
  } else {
    const __mmask16 m = first_lanes(left);
    const int32_t* base = t.accumulate ? t.c + at : t.init != nullptr ? t.init + col : nullptr;
    __m512i x = _mm512_add_epi32(_mm512_slli_epi32(hi, 8), lo);
    if (base != nullptr) x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(m, base));
    _mm512_mask_storeu_epi32(t.c + at, m, x);
  }
}

}  // namespace
}  // namespace fixq::gemm_detail
