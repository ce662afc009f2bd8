// The GEMM's kernel list, best first: one line per instruction-set family.
#include "gemm/kernels.h"

namespace fixq::gemm_detail {

cpu_detail::KernelRegistry<GemmKernels>& registry() {
  static cpu_detail::KernelRegistry<GemmKernels> r("gemm", {
                                                               {Isa::Avx512Bf16, nullptr},  // as avx512
                                                               {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                               {Isa::Avx512, &avx512::kGemm},
                                                               {Isa::Avx2, &avx2::kGemm},
                                                               {Isa::Scalar, &scalar::kGemm},
                                                           });
  return r;
}

cpu_detail::Picked<const MicroKernel*> pick_kernel(IntType a, IntType b) {
  const auto& r = registry();
  if (b == IntType::S16) return r.pick([](const GemmKernels& k) { return k.x8s16; });
  switch (a) {
    case IntType::U8: return r.pick([](const GemmKernels& k) { return k.u8s8; });
    case IntType::S8: return r.pick([](const GemmKernels& k) { return k.s8s8; });
    case IntType::S16: break;
  }
  return r.pick([](const GemmKernels& k) { return k.s16s8; });
}

}  // namespace fixq::gemm_detail
