// The quantize / dequantize kernel list: one entry per instruction-set family that brings
// kernels.
#include "quant/kernels.h"

namespace fixq::quant_detail {

FIXQ_KERNEL_REGISTRY(QuantTable, "quantize", kQuant, avx512, avx2, scalar)

std::vector<KernelChoice> report_kernels() {
  return {cpu_detail::choice("quantize int8", registry(), [](const QuantTable& t) { return t.s8.quantize; })};
}

}  // namespace fixq::quant_detail
