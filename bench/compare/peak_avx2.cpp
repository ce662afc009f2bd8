// vpmaddwd ymm throughput: 12 independent instructions per loop iteration (enough to hide
// latency on two multiply pipes), written in assembly so that no compiler's hoisting or
// register copies distort the count.
#include <immintrin.h>

#include "compare/peak.h"
#include "compare/timing.h"

namespace fixq::bench {

double vpmaddwd_peak_ops() {
  constexpr long kIters = 20'000'000;
  constexpr int kPerIter = 12;
  __m256i t0 = _mm256_setzero_si256(), t1 = t0, t2 = t0, t3 = t0, t4 = t0, t5 = t0, t6 = t0, t7 = t0, t8 = t0,
          t9 = t0, t10 = t0, t11 = t0;
  const __m256i a = _mm256_set1_epi16(3), b = _mm256_set1_epi16(-2);
  long n = kIters;
  const double start = bench_now();
  asm volatile(
      "1:\n\t"
      "vpmaddwd %[b], %[a], %[t0]\n\tvpmaddwd %[b], %[a], %[t1]\n\tvpmaddwd %[b], %[a], %[t2]\n\t"
      "vpmaddwd %[b], %[a], %[t3]\n\tvpmaddwd %[b], %[a], %[t4]\n\tvpmaddwd %[b], %[a], %[t5]\n\t"
      "vpmaddwd %[b], %[a], %[t6]\n\tvpmaddwd %[b], %[a], %[t7]\n\tvpmaddwd %[b], %[a], %[t8]\n\t"
      "vpmaddwd %[b], %[a], %[t9]\n\tvpmaddwd %[b], %[a], %[t10]\n\tvpmaddwd %[b], %[a], %[t11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      : [t0] "=&x"(t0), [t1] "=&x"(t1), [t2] "=&x"(t2), [t3] "=&x"(t3), [t4] "=&x"(t4), [t5] "=&x"(t5),
        [t6] "=&x"(t6), [t7] "=&x"(t7), [t8] "=&x"(t8), [t9] "=&x"(t9), [t10] "=&x"(t10), [t11] "=&x"(t11), [n] "+r"(n)
      : [a] "x"(a), [b] "x"(b)
      : "cc");
  const double s = bench_now() - start;
  return 2.0 * 16 * kPerIter * static_cast<double>(kIters) / s;
}

}  // namespace fixq::bench
