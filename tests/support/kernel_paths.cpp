#include "kernel_paths.h"

#include "bf16/kernels.h"
#include "cpu/registry.h"
#include "gemm/kernels.h"
#include "gguf/kernels.h"
#include "gru/float_kernels.h"
#include "gru/q_fast.h"
#include "lowp/kernels.h"
#include "packed/layout.h"
#include "quant/kernels.h"

namespace fixq::test {

namespace {

// Each module's AVX-512 family table compiled against SIMDe (tests/CMakeLists.txt builds
// every src/*/*_avx512*.cpp a second time). One line per module and emulated family.
void install_emulated_kernels() {
  static const bool installed = [] {
    gemm_detail::registry().install_emulated(Isa::Avx512, &gemm_detail::avx512_emulated::kGemm);
    quant_detail::registry().install_emulated(Isa::Avx512, &quant_detail::avx512_emulated::kQuant);
    gru_detail::registry().install_emulated(Isa::Avx512, &gru_detail::avx512_emulated::kGru);
    gru_detail::registry().install_emulated(Isa::Avx512Vbmi, &gru_detail::avx512vbmi_emulated::kGru);
    gru_float::registry().install_emulated(Isa::Avx512, &gru_float::avx512_emulated::kFloat);
    gguf::detail::registry().install_emulated(Isa::Avx512, &gguf::detail::avx512_emulated::kGguf);
    gguf::detail::registry().install_emulated(Isa::Avx512Vbmi, &gguf::detail::avx512vbmi_emulated::kGguf);
    bf16_detail::registry().install_emulated(Isa::Avx512Bf16, &bf16_detail::avx512bf16_emulated::kBf16);
    lowp_detail::registry().install_emulated(Isa::Avx512, &lowp_detail::avx512_emulated::kLowp);
    packed_detail::registry().install_emulated(Isa::Avx512, &packed_detail::avx512_emulated::kPacked);
    return true;
  }();
  (void)installed;
}

}  // namespace

bool has_emulation(Isa isa) { return (isa_features(isa) & kFeatureAvx512) != 0; }

std::string KernelPath::name() const { return to_string(isa) + (emulated ? "_simde" : ""); }

std::vector<KernelPath> kernel_paths() {
  install_emulated_kernels();
  std::vector<KernelPath> v;
  for (Isa isa : kAllIsas)
    if (cpu_supports(isa)) v.push_back({isa, false});
  for (Isa isa : kAllIsas)
    if (has_emulation(isa)) v.push_back({isa, true});
  return v;
}

std::vector<KernelPath> fast_paths() {
  std::vector<KernelPath> v;
  for (const KernelPath& p : kernel_paths())
    if (p.isa != Isa::Scalar) v.push_back(p);
  return v;
}

void use_path(const KernelPath& path) {
  install_emulated_kernels();
  set_isa_override(std::nullopt);  // first: set_isa_override checks against the emulation flag
  cpu_detail::set_emulation(path.emulated);
  set_isa_override(path.isa);
}

namespace {
void restore_defaults() {
  set_isa_override(std::nullopt);
  cpu_detail::set_emulation(false);
}
}  // namespace

PathScope::PathScope(const KernelPath& path) { use_path(path); }
PathScope::~PathScope() { restore_defaults(); }
PathGuard::~PathGuard() { restore_defaults(); }

}  // namespace fixq::test
