// The x86 instruction peaks of peak.h on other processors (aarch64): the callers ask for
// them only where the CPU has the x86 family (cpu_supports), which it never does here, so
// these exist for the link and report no peak.
#if !defined(__x86_64__)

#include "compare/peak.h"

namespace fixq::bench {

double vpmaddwd_peak_ops() { return 0; }
double vpdpbusd_peak_ops(long) { return 0; }
double vdpbf16ps_peak_flops() { return 0; }
int64_t sum_bytes_avx512(const int8_t*, size_t, long) { return 0; }

}  // namespace fixq::bench

#endif
