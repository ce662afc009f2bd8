// The bf16 dot / GEMM kernel list, best first: one line per instruction-set family.
#include "bf16/kernels.h"

namespace fixq::bf16_detail {

cpu_detail::KernelRegistry<Bf16Kernels>& registry() {
  static cpu_detail::KernelRegistry<Bf16Kernels> r("bf16", {
                                                               {Isa::Avx512Bf16, &avx512bf16::kBf16},
                                                               {Isa::Avx512Vbmi, nullptr},  // as avx2
                                                               {Isa::Avx512, nullptr},      // as avx2
                                                               {Isa::Avx2, &avx2::kBf16},
                                                               {Isa::Scalar, &scalar::kBf16},
                                                           });
  return r;
}

}  // namespace fixq::bf16_detail
