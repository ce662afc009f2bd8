// fixq/cpu.h — which instruction sets the fast kernels may use.
//
// Every fast kernel has a scalar reference with the same contract. Kernels come in
// families, one per instruction set (Isa); each family needs a set of CPU features. At run
// time every module picks, operation by operation, the best family whose features this CPU
// has (src/cpu/registry.h), so one build runs on any CPU of its architecture (x86-64,
// aarch64) and each operation uses the best kernel that exists for it.
//
// The environment variable FIXQ_ISA=<name> (or set_isa_override) caps the features at
// those of one family: FIXQ_ISA=avx2 runs AVX2 kernels even on an AVX-512 CPU, and
// FIXQ_ISA=scalar the references. Tests use it to compare every path on one machine.
// Forcing a family the CPU lacks is an error, not a crash.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fixq {

// CPU features, as bits of a mask. x86-64 and aarch64 have bits of their own; a build
// detects only its own architecture's (src/cpu/cpu_<arch>.cpp), so a family of another
// architecture is never supported.
enum Feature : uint32_t {
  kFeatureAvx2 = 1u << 0,    // AVX2, FMA, F16C, BMI2
  kFeatureAvx512 = 1u << 1,  // AVX-512 F, BW, DQ, VL, VNNI
  kFeatureVbmi = 1u << 2,    // AVX512_VBMI and GFNI (every CPU with the one has the other but Cannon Lake)
  kFeatureBf16 = 1u << 3,    // AVX512_BF16
  kFeatureAmx = 1u << 4,     // AMX-TILE and AMX-INT8, with the OS's permission to use the tiles
  kFeatureNeon = 1u << 5,    // aarch64 Advanced SIMD (Armv8.0; HWCAP_ASIMD)
  kFeatureDotprod = 1u << 6,  // SDOT / UDOT (Armv8.2 DotProd; HWCAP_ASIMDDP)
  kFeatureI8mm = 1u << 7,     // SMMLA / UMMLA / USMMLA (Armv8.6 I8MM; HWCAP2_I8MM)
  kFeatureArmBf16 = 1u << 8,  // BFDOT / BFMMLA / BFCVT (Armv8.6 BF16; HWCAP2_BF16)
};
using FeatureMask = uint32_t;

// Every instruction-set family fixq knows, once, on every architecture:
//   X(enumerator, name, architecture, features its kernels need)
// This list is the one place families are named. The enum, the names (FIXQ_ISA, fixq
// info), each family's features, the namespaces the modules declare their kernel tables in
// and the families their registries may list (src/cpu/registry.h) come from it, and the
// build reads it too (cmake/FixqArch.cmake): a file suffix of a family of another
// architecture is left out of the build, one of this architecture gets its flags from
// cmake/FixqIsa.cmake. A new family is a line here, its feature's detection in
// src/cpu/cpu_<arch>.cpp, its flags line, its kernel files and one word per module registry.
//   Scalar      portable C++: the reference every fast path must match bit for bit
//   Avx2        AVX2 + FMA + F16C + BMI2
//   Avx512      Avx2 + AVX-512 F, BW, DQ, VL and VNNI (Ice Lake, Cascade Lake, Zen 4 and later)
//   Avx512Vbmi  Avx512 + AVX512_VBMI and GFNI (vpermb byte tables, gf2p8affineqb bit moves;
//               Ice Lake, Zen 4 and later; not on Cascade Lake)
//   Avx512Bf16  Avx512 + AVX512_BF16 (vdpbf16ps; not on Ice Lake)
//   Amx         Avx512 + AMX-TILE and AMX-INT8 (tdpbusd / tdpbssd on 16 x 64 byte tiles; Intel
//               Xeon from Sapphire Rapids on; no AMD CPU so far)
//   Neon        aarch64 Advanced SIMD, Armv8.0 (every aarch64 CPU: Cortex-A53/A72 and later)
//   Dotprod     Neon + SDOT/UDOT (Cortex-A76/A55, Neoverse N1, Apple M1 and later)
//   I8mm        Dotprod + SMMLA/USMMLA (Neoverse V1/V2/N2, Cortex-X2/A710 and later; not N1, M1)
//   ArmBf16     Dotprod + BFDOT/BFMMLA (the same CPUs as I8mm); "armbf16", so that its
//               namespace never hides fixq::bf16
// (X receives the list's trailing arguments after its own four.)
#define FIXQ_KNOWN_ISA_FAMILIES(X, ...)                                                                      \
  X(Scalar, scalar, any, 0, __VA_ARGS__)                                                                    \
  X(Avx2, avx2, x86_64, ::fixq::kFeatureAvx2, __VA_ARGS__)                                                  \
  X(Avx512, avx512, x86_64, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512, __VA_ARGS__)                     \
  X(Avx512Vbmi, avx512vbmi, x86_64, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512 | ::fixq::kFeatureVbmi,   \
    __VA_ARGS__)                                                                                            \
  X(Avx512Bf16, avx512bf16, x86_64, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512 | ::fixq::kFeatureBf16,   \
    __VA_ARGS__)                                                                                            \
  X(Amx, amx, x86_64, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512 | ::fixq::kFeatureAmx, __VA_ARGS__)     \
  X(Neon, neon, aarch64, ::fixq::kFeatureNeon, __VA_ARGS__)                                                 \
  X(Dotprod, dotprod, aarch64, ::fixq::kFeatureNeon | ::fixq::kFeatureDotprod, __VA_ARGS__)                 \
  X(I8mm, i8mm, aarch64, ::fixq::kFeatureNeon | ::fixq::kFeatureDotprod | ::fixq::kFeatureI8mm, __VA_ARGS__) \
  X(ArmBf16, armbf16, aarch64, ::fixq::kFeatureNeon | ::fixq::kFeatureDotprod | ::fixq::kFeatureArmBf16,    \
    __VA_ARGS__)

// The architecture this code is compiled for: FIXQ_ON_ARCH_<arch>(...) keeps its arguments
// for "any" and for the target's architecture, and drops them for every other.
#define FIXQ_ON_ARCH_any(...) __VA_ARGS__
#if defined(__x86_64__)
#define FIXQ_TARGET_ARCH "x86_64"
#define FIXQ_ON_ARCH_x86_64(...) __VA_ARGS__
#define FIXQ_ON_ARCH_aarch64(...)
#elif defined(__aarch64__)
#define FIXQ_TARGET_ARCH "aarch64"
#define FIXQ_ON_ARCH_x86_64(...)
#define FIXQ_ON_ARCH_aarch64(...) __VA_ARGS__
#else
#define FIXQ_TARGET_ARCH "other"
#define FIXQ_ON_ARCH_x86_64(...)
#define FIXQ_ON_ARCH_aarch64(...)
#endif

// The families built for this architecture (scalar and the target's own), in the list's
// order: X(enumerator, name, features, trailing arguments...).
#define FIXQ_ISA_BUILT_ROW_(e, name, arch, features, X, ...) FIXQ_ON_ARCH_##arch(X(e, name, features, __VA_ARGS__))
#define FIXQ_ISA_FAMILIES(X, ...) FIXQ_KNOWN_ISA_FAMILIES(FIXQ_ISA_BUILT_ROW_, X, __VA_ARGS__)

// Every family fixq knows, on every architecture (FIXQ_ISA may name any of them; one of
// another architecture is an error that says so).
enum class Isa : uint8_t {
#define FIXQ_ISA_ENUMERATOR_(e, name, arch, features, ...) e,
  FIXQ_KNOWN_ISA_FAMILIES(FIXQ_ISA_ENUMERATOR_, )
#undef FIXQ_ISA_ENUMERATOR_
};

// The families this build has (scalar, then the target architecture's), in the order tests
// and reports list them.
inline constexpr auto kAllIsas = std::to_array<Isa>({
#define FIXQ_ISA_LISTED_(e, name, features, ...) Isa::e,
    FIXQ_ISA_FAMILIES(FIXQ_ISA_LISTED_, )
#undef FIXQ_ISA_LISTED_
});

// Whether this build has the family (it is in kAllIsas).
constexpr bool isa_built(Isa isa) {
  for (Isa i : kAllIsas)
    if (i == isa) return true;
  return false;
}

// The family's name in FIXQ_KNOWN_ISA_FAMILIES: "scalar", "avx2", "avx512", "neon", ...
std::string to_string(Isa isa);
// Parses a name of to_string, of any architecture's family; throws fixq::Error otherwise.
Isa parse_isa(std::string_view name);
// The architecture a family belongs to: "x86_64", "aarch64", or "any" (scalar).
std::string isa_architecture(Isa isa);

// The features a family's kernels need.
FeatureMask isa_features(Isa isa);
// The features this CPU (and OS: AVX state saved by XSAVE) has. FIXQ_CPU_FEATURES=<family>
// narrows them to that family's, to run the tests as on an older CPU.
FeatureMask cpu_features();
// Whether this CPU can run the kernels of that family (false for a family this build lacks).
bool cpu_supports(Isa isa);
// The last family of kAllIsas this CPU supports (for reports).
Isa best_isa();

// The features kernels may use now: those of the overriding family (set_isa_override, else
// FIXQ_ISA) if any, else cpu_features(). Throws fixq::Error if FIXQ_ISA names a family the
// CPU lacks.
FeatureMask active_features();
// The overriding family, if one is set (set_isa_override or FIXQ_ISA).
std::optional<Isa> forced_isa();
// Caps active_features() at a family's in this process (std::nullopt restores the
// default). Throws if the CPU lacks the family.
void set_isa_override(std::optional<Isa> isa);

// One operation's kernel, as the module that runs it reports it (fixq/kernels.h gathers
// them), e.g. {"gemm u8 x s8", "avx512 vpdpbusd u8 x s8, 6 x 64", Isa::Avx512}: the
// kernel's name, and the instruction-set family it belongs to (for an operation whose
// kernels come from several families, as the GGUF formats', the one most of them use; the
// kernel string then names the others).
struct KernelChoice {
  std::string operation;
  std::string kernel;
  Isa family = Isa::Scalar;
};

}  // namespace fixq
