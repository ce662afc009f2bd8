// The quantize / dequantize kernel list, best first: one line per instruction-set family.
#include "quant/kernels.h"

namespace fixq::quant_detail {

cpu_detail::KernelRegistry<QuantTable>& registry() {
  static cpu_detail::KernelRegistry<QuantTable> r("quantize", {
                                                                  {Isa::Avx512Bf16, nullptr},  // as avx512
                                                                  {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                                  {Isa::Avx512, &avx512::kQuant},
                                                                  {Isa::Avx2, &avx2::kQuant},
                                                                  {Isa::Scalar, &scalar::kQuant},
                                                              });
  return r;
}

}  // namespace fixq::quant_detail
