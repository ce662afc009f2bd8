#include "fixq/cpu.h"

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <string>

#include "cpu/detect.h"
#include "cpu/registry.h"
#include "fixq/error.h"

namespace fixq {

namespace {

// -1: no override; otherwise static_cast<int>(Isa).
std::atomic<int> g_override{-1};
std::atomic<bool> g_emulation{false};

}  // namespace

#if !defined(__x86_64__) && !defined(__aarch64__)
// Any other processor: no fast family, the scalar kernels only (cpu_x86.cpp and
// cpu_aarch64.cpp detect their architectures' features).
FeatureMask cpu_detail::detect_features() { return 0; }
#endif

namespace {

// Every family: its name and the features its kernels need (each family's features include
// those of every family it extends, which is how the registries order their lists).
struct Family {
  Isa isa;
  const char* name;
  const char* architecture;
  FeatureMask features;
};
constexpr Family kFamilies[] = {
#define FIXQ_ISA_ROW_(e, name, arch, features, ...) {Isa::e, #name, #arch, features},
    FIXQ_KNOWN_ISA_FAMILIES(FIXQ_ISA_ROW_, )
#undef FIXQ_ISA_ROW_
};

const Family* family(Isa isa) {
  for (const Family& f : kFamilies)
    if (f.isa == isa) return &f;
  return nullptr;
}

}  // namespace

std::string to_string(Isa isa) {
  const Family* f = family(isa);
  return f != nullptr ? f->name : "unknown";
}

Isa parse_isa(std::string_view name) {
  std::string known;
  for (const Family& f : kFamilies) {
    if (name == f.name) return f.isa;
    known += (known.empty() ? "" : ", ") + std::string(f.name);
  }
  fail("unknown instruction set '", name, "': expected one of ", known);
}

std::string isa_architecture(Isa isa) {
  const Family* f = family(isa);
  return f != nullptr ? f->architecture : "unknown";
}

FeatureMask isa_features(Isa isa) {
  const Family* f = family(isa);
  return f != nullptr ? f->features : ~FeatureMask{0};
}

FeatureMask cpu_features() {
  // FIXQ_CPU_FEATURES=<family> takes the CPU to have that family's features at most: the
  // test suite then runs as on an older CPU (AVX-512 kernels only through SIMDe).
  static const FeatureMask features = [] {
    FeatureMask m = cpu_detail::detect_features();
    if (const char* env = std::getenv("FIXQ_CPU_FEATURES"); env != nullptr && *env != '\0')
      m &= isa_features(parse_isa(env));
    return m;
  }();
  return features;
}

bool cpu_supports(Isa isa) { return isa_built(isa) && (isa_features(isa) & ~cpu_features()) == 0; }

Isa best_isa() {
  Isa best = Isa::Scalar;
  for (Isa isa : kAllIsas)
    if (cpu_supports(isa)) best = isa;
  return best;
}

namespace {

std::string built_names() {
  std::string s;
  for (Isa isa : kAllIsas) s += (s.empty() ? "" : ", ") + to_string(isa);
  return s;
}

Isa checked(Isa isa, const char* source) {
  require(isa_built(isa), source, " asks for the ", to_string(isa), " kernels, a family of ", isa_architecture(isa),
          ", but this build is for ", FIXQ_TARGET_ARCH, " (its families: ", built_names(), ")");
  require(cpu_supports(isa) || cpu_detail::emulation_enabled(), source, " asks for the ", to_string(isa),
          " kernels, but this CPU does not support them (best here: ", to_string(best_isa()), ")");
  return isa;
}

std::optional<Isa> env_isa() {
  static const std::optional<Isa> from_env = []() -> std::optional<Isa> {
    const char* env = std::getenv("FIXQ_ISA");
    if (env == nullptr || *env == '\0') return std::nullopt;
    return checked(parse_isa(env), "FIXQ_ISA");
  }();
  return from_env;
}

}  // namespace

std::optional<Isa> forced_isa() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Isa>(forced);
  return env_isa();
}

FeatureMask active_features() {
  const std::optional<Isa> forced = forced_isa();
  return forced ? isa_features(*forced) : cpu_features();
}

void set_isa_override(std::optional<Isa> isa) {
  if (isa) checked(*isa, "set_isa_override");
  g_override.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

namespace cpu_detail {

bool emulation_enabled() { return g_emulation.load(std::memory_order_relaxed); }
void set_emulation(bool on) { g_emulation.store(on, std::memory_order_relaxed); }

}  // namespace cpu_detail

}  // namespace fixq
