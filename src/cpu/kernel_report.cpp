// active_kernels(): which family each module's operations run now, from the modules' own
// registries (the same pick() the operations make).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "bf16/kernels.h"
#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/gguf.h"
#include "gemm/kernels.h"
#include "gguf/kernels.h"
#include "gru/float_kernels.h"
#include "gru/q_fast.h"
#include "lowp/kernels.h"
#include "packed/layout.h"
#include "quant/kernels.h"

namespace fixq {

namespace {

// The family that runs op for the GGUF types that have it: the one most types use, then
// each other one with its types ("avx512; avx512vbmi: q3_K, q4_K"), since the formats'
// kernels come from different families on one CPU.
std::string gguf_families(std::string_view op) {
  std::vector<std::pair<std::string, std::vector<std::string_view>>> families;  // family, its types
  for (const gguf::TypeTraits& t : gguf::all_types()) {
    const std::string f = gguf::active_kernel_family(t.type, op);
    if (f == "none") continue;
    auto it = std::find_if(families.begin(), families.end(), [&](const auto& e) { return e.first == f; });
    if (it == families.end()) it = families.insert(families.end(), {f, {}});
    it->second.push_back(t.name);
  }
  std::stable_sort(families.begin(), families.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::string out;
  for (size_t i = 0; i < families.size(); ++i) {
    out += i == 0 ? families[i].first : "; " + families[i].first + ":";
    for (size_t j = 0; i > 0 && j < families[i].second.size(); ++j)
      out += (j == 0 ? " " : ", ") + std::string(families[i].second[j]);
  }
  return out;
}

}  // namespace

std::vector<KernelChoice> active_kernels() {
  std::vector<KernelChoice> v;
  auto gemm = [&](const char* op, IntType a, IntType b) {
    const auto k = gemm_detail::pick_kernel(a, b);
    v.push_back({op, k.kernel->name});
  };
  gemm("gemm u8 x s8", IntType::U8, IntType::S8);
  gemm("gemm s8 x s8", IntType::S8, IntType::S8);
  gemm("gemm s16 x s8", IntType::S16, IntType::S8);
  gemm("gemm u8/s8 x s16", IntType::U8, IntType::S16);
  v.push_back({"gru step", gru_detail::fast_kernel_name()});
  v.push_back({"gru float", gru_float::active_kernel_name()});
  v.push_back({"quantize int8",
               to_string(quant_detail::registry().pick([](const quant_detail::QuantTable& t) { return t.s8.quantize; }).isa)});
  v.push_back({"gguf dot", gguf_families("matvec")});
  v.push_back({"gguf dequantize", gguf_families("dequantize")});
  const auto lowp = lowp_detail::registry().pick([](const lowp_detail::LowpKernels& k) { return k.convert.decode[0]; });
  v.push_back({"float8/6/4 convert", to_string(lowp.isa)});
  const auto packed = packed_detail::registry().pick([](const packed_detail::PackedKernels& k) { return k.matmul; });
  v.push_back({"packed weight-only matmul", to_string(packed.isa)});
  const auto bf16 = bf16_detail::registry().pick([](const bf16_detail::Bf16Kernels& k) { return k.gemm; });
  v.push_back({"bf16 dot/gemm", to_string(bf16.isa)});
  return v;
}

std::string active_kernel(std::string_view operation) {
  std::string known;
  for (const KernelChoice& k : active_kernels()) {
    if (k.operation == operation) return k.kernel;
    known += (known.empty() ? "" : ", ") + k.operation;
  }
  fail("unknown operation '", operation, "'; known: ", known);
}

}  // namespace fixq
