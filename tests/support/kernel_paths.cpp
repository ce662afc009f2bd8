#include "kernel_paths.h"

#include "cpu/registry.h"

namespace fixq::test {

namespace {

// Each module's AVX-512 family tables compiled against SIMDe (tests/CMakeLists.txt builds
// every src/*/*_avx512*.cpp a second time), installed into their registries from the
// census of tables (src/cpu/registry.h), which the tests link whole.
void install_emulated_kernels() {
  static const bool installed = [] {
    for (const cpu_detail::TableRecord& t : cpu_detail::recorded_tables())
      if (t.emulated) t.install(t);
    return true;
  }();
  (void)installed;
}

}  // namespace

// The families whose files tests/CMakeLists.txt compiles against SIMDe: *_avx512*.cpp (SIMDe
// has no AMX), in the builds that emulate the library's kernels (FIXQ_EMULATE_KERNELS).
bool has_emulation(Isa isa) { return FIXQ_KERNELS_EMULATED && to_string(isa).rfind("avx512", 0) == 0; }

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
