// The GGUF kernel list, best first: one line per instruction-set family.
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

cpu_detail::KernelRegistry<GgufKernels>& registry() {
  static cpu_detail::KernelRegistry<GgufKernels> r("gguf", {
                                                               {Isa::Avx512Bf16, nullptr},  // as avx512
                                                               {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                               {Isa::Avx512, &avx512::kGguf},
                                                               {Isa::Avx2, &avx2::kGguf},
                                                               {Isa::Scalar, &scalar::kGguf},
                                                           });
  return r;
}

FormatKernels active_kernels(Type type) {
  const auto i = static_cast<std::size_t>(type);
  const auto& r = registry();
  const bool has_dot = i < kTypeCount && traits(type).dot_type;
  return {r.pick([i](const GgufKernels& k) { return k.format[i].quantize; }).kernel,
          r.pick([i](const GgufKernels& k) { return k.format[i].dequantize; }).kernel,
          has_dot ? r.pick([i](const GgufKernels& k) { return k.format[i].dot; }).kernel : nullptr,
          has_dot ? r.find([i](const GgufKernels& k) { return k.format[i].matvec; }).kernel : nullptr};
}

}  // namespace fixq::gguf::detail
