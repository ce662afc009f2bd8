// The low-precision float kernel list: one entry per instruction-set family that brings
// kernels.
#include "lowp/kernels.h"

namespace fixq::lowp_detail {

FIXQ_KERNEL_REGISTRY(LowpKernels, "lowp", kLowp, avx512, avx2, scalar)

std::vector<KernelChoice> report_kernels() {
  return {cpu_detail::choice("float8/6/4 convert", registry(), [](const LowpKernels& k) { return k.convert.decode[0]; })};
}

}  // namespace fixq::lowp_detail
