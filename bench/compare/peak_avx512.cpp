// vpdpbusd zmm throughput, as peak_avx2.cpp; called only where the CPU has AVX-512 VNNI.
#include <immintrin.h>

#include <chrono>

#include "compare/peak.h"

namespace fixq::bench {

double vpdpbusd_peak_ops() {
  constexpr int kChains = 12;
  constexpr long kIters = 20'000'000;
  __m512i acc[kChains];
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (auto& x : acc) x = _mm512_setzero_si512();
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIters; ++i)
    for (auto& x : acc) x = _mm512_dpbusd_epi32(x, a, b);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int sink = 0;
  for (auto& x : acc) sink += _mm_cvtsi128_si32(_mm512_castsi512_si128(x));
  asm volatile("" : : "r"(sink));
  return 2.0 * 64 * kChains * static_cast<double>(kIters) / s;
}

}  // namespace fixq::bench
