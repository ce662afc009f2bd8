// The float GRU's kernel list and the choice among it.
#include "cpu/registry.h"
#include "gru/float/kernels.h"

namespace fixq::gru_float {

FIXQ_KERNEL_REGISTRY(FloatKernels, "gru float", kFloat, avx512, avx2, scalar)

ActiveKernels active_kernels() {
  const auto& r = registry();
  return {r.pick([](const FloatKernels& k) { return k.matmul; }).kernel,
          r.pick([](const FloatKernels& k) { return k.pack; }).kernel,
          r.pick([](const FloatKernels& k) { return k.gates; }).kernel};
}

std::vector<KernelChoice> report_kernels() {
  return {cpu_detail::choice("gru float", registry(), [](const FloatKernels& k) { return k.matmul; })};
}

}  // namespace fixq::gru_float
