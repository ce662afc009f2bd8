// The GGUF kernel list, one line per instruction-set family that brings kernels.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "fixq/error.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

FIXQ_KERNEL_REGISTRY(GgufKernels, "gguf", kGguf, avx512vbmi, avx512, avx2, scalar)

FormatKernels active_kernels(Type type) {
  const auto i = static_cast<std::size_t>(type);
  const auto& r = registry();
  const bool has_dot = i < kTypeCount && traits(type).dot_type;
  return {r.pick([i](const GgufKernels& k) { return k.format[i].quantize; }).kernel,
          r.pick([i](const GgufKernels& k) { return k.format[i].dequantize; }).kernel,
          has_dot ? r.pick([i](const GgufKernels& k) { return k.format[i].dot; }).kernel : nullptr,
          has_dot ? r.find([i](const GgufKernels& k) { return k.format[i].matvec; }).kernel : nullptr};
}

namespace {

// The family that runs op for the GGUF types that have it: the one most types use, then
// each other one with its types ("avx512; avx512vbmi: q3_K, q4_K"), since the formats'
// kernels come from different families on one CPU.
KernelChoice families(const char* operation, std::string_view op) {
  std::vector<std::pair<std::string, std::vector<std::string_view>>> found;  // family, its types
  for (const TypeTraits& t : all_types()) {
    const std::string f = active_kernel_family(t.type, op);
    if (f == "none") continue;
    auto it = std::find_if(found.begin(), found.end(), [&](const auto& e) { return e.first == f; });
    if (it == found.end()) it = found.insert(found.end(), {f, {}});
    it->second.push_back(t.name);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  KernelChoice c{operation, "", found.empty() ? Isa::Scalar : parse_isa(found[0].first)};
  for (size_t i = 0; i < found.size(); ++i) {
    c.kernel += i == 0 ? found[i].first : "; " + found[i].first + ":";
    for (size_t j = 0; i > 0 && j < found[i].second.size(); ++j)
      c.kernel += (j == 0 ? " " : ", ") + std::string(found[i].second[j]);
  }
  return c;
}

}  // namespace

std::vector<KernelChoice> report_kernels() { return {families("gguf dot", "matvec"), families("gguf dequantize", "dequantize")}; }

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
