// The bf16 dot / GEMM kernel list: one entry per instruction-set family that brings kernels.
#include "bf16/kernels.h"

namespace fixq::bf16_detail {

FIXQ_KERNEL_REGISTRY(Bf16Kernels, "bf16", kBf16, avx512bf16, avx2, scalar)

std::vector<KernelChoice> report_kernels() {
  return {cpu_detail::choice("bf16 dot/gemm", registry(), [](const Bf16Kernels& k) { return k.gemm; })};
}

}  // namespace fixq::bf16_detail
