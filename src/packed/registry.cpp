// The packed-weights kernel list, best first: one line per instruction-set family.
#include "packed/layout.h"

namespace fixq::packed_detail {

cpu_detail::KernelRegistry<PackedKernels>& registry() {
  static cpu_detail::KernelRegistry<PackedKernels> r("packed", {
                                                                   {Isa::Avx512Bf16, nullptr},  // as avx512
                                                                   {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                                   {Isa::Avx512, &avx512::kPacked},
                                                                   {Isa::Avx2, &avx2::kPacked},
                                                                   {Isa::Scalar, &scalar::kPacked},
                                                               });
  return r;
}

}  // namespace fixq::packed_detail
