// CPU feature detection on aarch64 Linux: the kernel's hardware capabilities
// (getauxval(AT_HWCAP) and AT_HWCAP2), which say what the CPU has and the kernel lets user
// code run. Each family's features include its base's, so a CPU reporting dotprod without
// Advanced SIMD (none exists) would get neither.
#if defined(__aarch64__)

#include <sys/auxv.h>

#include "cpu/detect.h"

// The bits of Linux's arch/arm64/include/uapi/asm/hwcap.h, in case the C library's headers
// predate them.
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1ul << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1ul << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1ul << 13)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1ul << 14)
#endif

namespace fixq::cpu_detail {

FeatureMask detect_features() {
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  FeatureMask m = 0;
  if ((hwcap & HWCAP_ASIMD) == 0) return m;
  m |= kFeatureNeon;
  if ((hwcap & HWCAP_ASIMDDP) == 0) return m;
  m |= kFeatureDotprod;
  if ((hwcap2 & HWCAP2_I8MM) != 0) m |= kFeatureI8mm;
  if ((hwcap2 & HWCAP2_BF16) != 0) m |= kFeatureArmBf16;
  return m;
}

}  // namespace fixq::cpu_detail

#endif  // __aarch64__
