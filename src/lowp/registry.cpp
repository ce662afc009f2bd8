// The low-precision float kernel list, best first: one line per instruction-set family.
#include "lowp/kernels.h"

namespace fixq::lowp_detail {

cpu_detail::KernelRegistry<LowpKernels>& registry() {
  static cpu_detail::KernelRegistry<LowpKernels> r("lowp", {
                                                               {Isa::Avx512Bf16, nullptr},  // as avx512
                                                               {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                               {Isa::Avx512, &avx512::kLowp},
                                                               {Isa::Avx2, &avx2::kLowp},
                                                               {Isa::Scalar, &scalar::kLowp},
                                                           });
  return r;
}

}  // namespace fixq::lowp_detail
