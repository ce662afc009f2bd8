// CPU feature detection on x86-64: CPUID, XGETBV and Linux's AMX permission.
#if defined(__x86_64__)

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu/detect.h"

namespace fixq::cpu_detail {

namespace {

// CPUID leaf 1, ECX bit 29. Asked directly because clang before 16 does not know
// __builtin_cpu_supports("f16c") (the fuzz build, scripts/fuzz.sh, uses Debian's clang 14).
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

// CPUID leaf 7 sub-leaf 1, EAX bit 5: AVX512_BF16 (GCC 12's __builtin_cpu_supports knows
// "avx512bf16", clang 14's does not, so it is asked directly too).
bool cpu_has_avx512bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 5)) != 0;
}

// AMX-TILE and AMX-INT8 (CPUID leaf 7, EDX bits 24 and 25), the OS saving the tile state
// (XCR0 bits 17 and 18), and the permission Linux asks each process to request before its
// first tile instruction (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, Linux 5.16 and
// later). A kernel that refuses leaves AMX off: the AVX-512 kernels run instead.
bool cpu_has_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0 || (edx & (3u << 24)) != (3u << 24)) return false;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_OSXSAVE) == 0) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & (3u << 17)) != (3u << 17)) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace

FeatureMask detect_features() {
  __builtin_cpu_init();
  FeatureMask m = 0;
  // __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512 state (XGETBV).
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c() &&
                    __builtin_cpu_supports("bmi2");
  if (!avx2) return m;
  m |= kFeatureAvx2;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  if (!avx512) return m;
  m |= kFeatureAvx512;
  if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni")) m |= kFeatureVbmi;
  if (cpu_has_avx512bf16()) m |= kFeatureBf16;
  if (cpu_has_amx()) m |= kFeatureAmx;
  return m;
}

}  // namespace fixq::cpu_detail

#endif  // __x86_64__
