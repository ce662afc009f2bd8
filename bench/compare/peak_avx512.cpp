// vpdpbusd zmm throughput: 12 independent accumulators per loop iteration (enough to hide
// the instruction's latency on two multiply pipes), written in assembly so that no
// compiler's register copies or hoisting distort the count; and 64-byte reads summed.
#include <immintrin.h>

#include "compare/peak.h"
#include "compare/timing.h"

namespace fixq::bench {

double vpdpbusd_peak_ops(long iterations) {
  const long kIters = iterations;
  constexpr int kPerIter = 12;
  __m512i x0 = _mm512_setzero_si512(), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0, x7 = x0, x8 = x0,
          x9 = x0, x10 = x0, x11 = x0;
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  long n = kIters;
  const double t0 = bench_now();
  asm volatile(
      "1:\n\t"
      "vpdpbusd %[b], %[a], %[x0]\n\tvpdpbusd %[b], %[a], %[x1]\n\tvpdpbusd %[b], %[a], %[x2]\n\t"
      "vpdpbusd %[b], %[a], %[x3]\n\tvpdpbusd %[b], %[a], %[x4]\n\tvpdpbusd %[b], %[a], %[x5]\n\t"
      "vpdpbusd %[b], %[a], %[x6]\n\tvpdpbusd %[b], %[a], %[x7]\n\tvpdpbusd %[b], %[a], %[x8]\n\t"
      "vpdpbusd %[b], %[a], %[x9]\n\tvpdpbusd %[b], %[a], %[x10]\n\tvpdpbusd %[b], %[a], %[x11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      : [x0] "+v"(x0), [x1] "+v"(x1), [x2] "+v"(x2), [x3] "+v"(x3), [x4] "+v"(x4), [x5] "+v"(x5), [x6] "+v"(x6),
        [x7] "+v"(x7), [x8] "+v"(x8), [x9] "+v"(x9), [x10] "+v"(x10), [x11] "+v"(x11), [n] "+r"(n)
      : [a] "v"(a), [b] "v"(b)
      : "cc");
  const double s = bench_now() - t0;
  return 2.0 * 64 * kPerIter * static_cast<double>(kIters) / s;
}

int64_t sum_bytes_avx512(const int8_t* buf, size_t bytes, long passes) {
  __m512i acc[8];
  for (auto& a : acc) a = _mm512_setzero_si512();
  const size_t vectors = bytes / 64;
  for (long p = 0; p < passes; ++p) {
    const __m512i* v = reinterpret_cast<const __m512i*>(buf);
    asm volatile("" : "+r"(v));  // an opaque pointer per pass: every pass reads memory again
    for (size_t i = 0; i < vectors; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] = _mm512_add_epi8(acc[j], _mm512_load_si512(v + i + j));
  }
  __m512i all = acc[0];
  for (int i = 1; i < 8; ++i) all = _mm512_add_epi8(all, acc[i]);
  return _mm512_reduce_add_epi64(_mm512_sad_epu8(all, _mm512_setzero_si512()));
}

}  // namespace fixq::bench
