// The GGUF kernel list, best first: one line per instruction-set family.
#include "fixq/error.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

cpu_detail::KernelRegistry<GgufKernels>& registry() {
  static cpu_detail::KernelRegistry<GgufKernels> r("gguf", {
                                                               {Isa::Avx512Bf16, nullptr},  // as avx512
                                                               {Isa::Avx512Vbmi, &avx512vbmi::kGguf},
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

namespace fixq::gguf {

std::string active_kernel_family(Type type, std::string_view op) {
  using detail::GgufKernels;
  const auto i = static_cast<std::size_t>(type);
  require(i < detail::kTypeCount, "gguf: unknown type id ", i);
  const auto& r = detail::registry();
  const bool has_dot = traits(type).dot_type.has_value();
  if (op == "quantize") return to_string(r.pick([i](const GgufKernels& k) { return k.format[i].quantize; }).isa);
  if (op == "dequantize") return to_string(r.pick([i](const GgufKernels& k) { return k.format[i].dequantize; }).isa);
  if (op == "dot" || op == "matvec") {
    if (!has_dot) return "none";
    if (op == "matvec") {
      const auto m = r.find([i](const GgufKernels& k) { return k.format[i].matvec; });
      if (m.kernel != nullptr) return to_string(m.isa);
    }
    return to_string(r.pick([i](const GgufKernels& k) { return k.format[i].dot; }).isa);
  }
  fail("gguf: unknown operation '", op, "'; known: quantize, dequantize, dot, matvec");
}

}  // namespace fixq::gguf
