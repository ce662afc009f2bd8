// vdpbf16ps zmm throughput: 12 independent accumulators per loop iteration, in assembly (as
// peak_avx512.cpp, for the same reasons).
#include <immintrin.h>

#include "compare/peak.h"
#include "compare/timing.h"

namespace fixq::bench {

double vdpbf16ps_peak_flops() {
  constexpr long kIters = 20'000'000;
  constexpr int kPerIter = 12;
  __m512 x0 = _mm512_setzero_ps(), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0, x7 = x0, x8 = x0, x9 = x0,
         x10 = x0, x11 = x0;
  const __m512i a = _mm512_set1_epi16(0x3F80), b = _mm512_set1_epi16(0x3C00);  // 1.0, 2^-7
  long n = kIters;
  const double t0 = bench_now();
  asm volatile(
      "1:\n\t"
      "vdpbf16ps %[b], %[a], %[x0]\n\tvdpbf16ps %[b], %[a], %[x1]\n\tvdpbf16ps %[b], %[a], %[x2]\n\t"
      "vdpbf16ps %[b], %[a], %[x3]\n\tvdpbf16ps %[b], %[a], %[x4]\n\tvdpbf16ps %[b], %[a], %[x5]\n\t"
      "vdpbf16ps %[b], %[a], %[x6]\n\tvdpbf16ps %[b], %[a], %[x7]\n\tvdpbf16ps %[b], %[a], %[x8]\n\t"
      "vdpbf16ps %[b], %[a], %[x9]\n\tvdpbf16ps %[b], %[a], %[x10]\n\tvdpbf16ps %[b], %[a], %[x11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      : [x0] "+v"(x0), [x1] "+v"(x1), [x2] "+v"(x2), [x3] "+v"(x3), [x4] "+v"(x4), [x5] "+v"(x5), [x6] "+v"(x6),
        [x7] "+v"(x7), [x8] "+v"(x8), [x9] "+v"(x9), [x10] "+v"(x10), [x11] "+v"(x11), [n] "+r"(n)
      : [a] "v"(a), [b] "v"(b)
      : "cc");
  const double s = bench_now() - t0;
  // 32 bf16 products per instruction, a multiply-add counting 2.
  return 2.0 * 32 * kPerIter * static_cast<double>(kIters) / s;
}

}  // namespace fixq::bench
