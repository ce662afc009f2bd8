#include "fixq/cpu.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <string>

#include "cpu/registry.h"
#include "fixq/error.h"

namespace fixq {

namespace {

// -1: no override; otherwise static_cast<int>(Isa).
std::atomic<int> g_override{-1};
std::atomic<bool> g_emulation{false};

// CPUID leaf 1, ECX bit 29. Asked directly because clang before 16 does not know
// __builtin_cpu_supports("f16c") (the fuzz build, scripts/fuzz.sh, uses Debian's clang 14).
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

// CPUID leaf 7 sub-leaf 1, EAX bit 5: AVX512_BF16 (GCC 12's __builtin_cpu_supports knows
// "avx512bf16", clang 14's does not, so it is asked directly too).
bool cpu_has_avx512bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 5)) != 0;
}

// AMX-TILE and AMX-INT8 (CPUID leaf 7, EDX bits 24 and 25), the OS saving the tile state
// (XCR0 bits 17 and 18), and the permission Linux asks each process to request before its
// first tile instruction (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, Linux 5.16 and
// later). A kernel that refuses leaves AMX off: the AVX-512 kernels run instead.
bool cpu_has_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0 || (edx & (3u << 24)) != (3u << 24)) return false;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_OSXSAVE) == 0) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & (3u << 17)) != (3u << 17)) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

FeatureMask detect() {
  __builtin_cpu_init();
  FeatureMask m = 0;
  // __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512 state (XGETBV).
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c() &&
                    __builtin_cpu_supports("bmi2");
  if (!avx2) return m;
  m |= kFeatureAvx2;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  if (!avx512) return m;
  m |= kFeatureAvx512;
  if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni")) m |= kFeatureVbmi;
  if (cpu_has_avx512bf16()) m |= kFeatureBf16;
  if (cpu_has_amx()) m |= kFeatureAmx;
  return m;
}

}  // namespace

namespace {

// Every family: its name and the features its kernels need (each family's features include
// those of every family it extends, which is how the registries order their lists).
struct Family {
  Isa isa;
  const char* name;
  FeatureMask features;
};
constexpr Family kFamilies[] = {
#define FIXQ_ISA_ROW_(e, name, features, ...) {Isa::e, #name, features},
    FIXQ_ISA_FAMILIES(FIXQ_ISA_ROW_, )
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

FeatureMask isa_features(Isa isa) {
  const Family* f = family(isa);
  return f != nullptr ? f->features : ~FeatureMask{0};
}

FeatureMask cpu_features() {
  // FIXQ_CPU_FEATURES=<family> takes the CPU to have that family's features at most: the
  // test suite then runs as on an older CPU (AVX-512 kernels only through SIMDe).
  static const FeatureMask features = [] {
    FeatureMask m = detect();
    if (const char* env = std::getenv("FIXQ_CPU_FEATURES"); env != nullptr && *env != '\0')
      m &= isa_features(parse_isa(env));
    return m;
  }();
  return features;
}

bool cpu_supports(Isa isa) { return (isa_features(isa) & ~cpu_features()) == 0; }

Isa best_isa() {
  Isa best = Isa::Scalar;
  for (Isa isa : kAllIsas)
    if (cpu_supports(isa)) best = isa;
  return best;
}

namespace {

Isa checked(Isa isa, const char* source) {
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
