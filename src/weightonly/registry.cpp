// The weight-only matmul kernel list: one entry per instruction-set family that brings
// kernels.
#include "weightonly/layout.h"

namespace fixq::weightonly_detail {

FIXQ_KERNEL_REGISTRY(PackedKernels, "packed", kPacked, avx512, avx2, scalar)

std::vector<KernelChoice> report_kernels() {
  return {cpu_detail::choice("packed weight-only matmul", registry(), [](const PackedKernels& k) { return k.matmul; })};
}

}  // namespace fixq::weightonly_detail
