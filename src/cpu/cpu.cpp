#include "fixq/cpu.h"

#include <cpuid.h>

#include <atomic>
#include <cstdlib>

#include "fixq/error.h"

namespace fixq {

namespace {
// -1: no override; otherwise static_cast<int>(Isa).
std::atomic<int> g_override{-1};

// CPUID leaf 1, ECX bit 29. Asked directly because clang before 16 does not know
// __builtin_cpu_supports("f16c") (the fuzz build, scripts/fuzz.sh, uses Debian's clang 14).
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
}  // namespace

std::string to_string(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "unknown";
}

Isa parse_isa(std::string_view name) {
  if (name == "scalar") return Isa::Scalar;
  if (name == "avx2") return Isa::Avx2;
  if (name == "avx512") return Isa::Avx512;
  fail("unknown instruction set '", name, "': expected scalar, avx2 or avx512");
}

bool cpu_supports(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             cpu_has_f16c() && __builtin_cpu_supports("bmi2");
    case Isa::Avx512:
      return cpu_supports(Isa::Avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

Isa best_isa() {
  static const Isa best = cpu_supports(Isa::Avx512) ? Isa::Avx512
                          : cpu_supports(Isa::Avx2) ? Isa::Avx2
                                                    : Isa::Scalar;
  return best;
}

namespace {
Isa checked(Isa isa, const char* source) {
  require(cpu_supports(isa), source, " asks for the ", to_string(isa),
          " kernels, but this CPU does not support them (best here: ", to_string(best_isa()), ")");
  return isa;
}
}  // namespace

Isa active_isa() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Isa>(forced);
  static const std::optional<Isa> from_env = []() -> std::optional<Isa> {
    const char* env = std::getenv("FIXQ_ISA");
    if (env == nullptr || *env == '\0') return std::nullopt;
    return checked(parse_isa(env), "FIXQ_ISA");
  }();
  return from_env ? *from_env : best_isa();
}

void set_isa_override(std::optional<Isa> isa) {
  if (isa) checked(*isa, "set_isa_override");
  g_override.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

}  // namespace fixq
