// The float GRU's kernel list and the choice among it.
#include "cpu/registry.h"
#include "gru/float_kernels.h"

namespace fixq::gru_float {

cpu_detail::KernelRegistry<FloatKernels>& registry() {
  static cpu_detail::KernelRegistry<FloatKernels> r("gru float", {
                                                                     {Isa::Avx512Bf16, nullptr},  // as avx512
                                                                     {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                                     {Isa::Avx512, &avx512::kFloat},
                                                                     {Isa::Avx2, &avx2::kFloat},
                                                                     {Isa::Scalar, &scalar::kFloat},
                                                                 });
  return r;
}

ActiveKernels active_kernels() {
  const auto& r = registry();
  return {r.pick([](const FloatKernels& k) { return k.matmul_nt; }).kernel,
          r.pick([](const FloatKernels& k) { return k.gates; }).kernel};
}

std::string active_kernel_name() {
  return to_string(registry().pick([](const FloatKernels& k) { return k.matmul_nt; }).isa);
}

}  // namespace fixq::gru_float
