// vpmaddwd throughput: 12 independent accumulator chains (enough to hide latency on the
// two multiply pipes of current x86 cores), measured over a fixed instruction count.
#include <immintrin.h>

#include <chrono>

#include "compare/peak.h"

namespace fixq::bench {

double vpmaddwd_peak_ops() {
  constexpr int kChains = 12;
  constexpr long kIters = 20'000'000;
  __m256i acc[kChains];
  const __m256i a = _mm256_set1_epi16(3), b = _mm256_set1_epi16(-2);
  for (auto& x : acc) x = _mm256_setzero_si256();
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIters; ++i)
    for (auto& x : acc) x = _mm256_add_epi32(x, _mm256_madd_epi16(a, b));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int sink = 0;
  for (auto& x : acc) sink += _mm256_extract_epi32(x, 0);
  asm volatile("" : : "r"(sink));
  return 2.0 * 16 * kChains * static_cast<double>(kIters) / s;
}

}  // namespace fixq::bench
