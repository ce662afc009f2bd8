// fixq/cpu.h — which instruction sets the fast kernels may use.
//
// Every fast kernel has a scalar reference with the same contract. Kernels come in
// families, one per instruction set (Isa); each family needs a set of CPU features. At run
// time every module picks, operation by operation, the best family whose features this CPU
// has (src/cpu/registry.h), so one build runs on any x86-64 and each operation uses the
// best kernel that exists for it.
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

// CPU features, as bits of a mask.
enum Feature : uint32_t {
  kFeatureAvx2 = 1u << 0,    // AVX2, FMA, F16C, BMI2
  kFeatureAvx512 = 1u << 1,  // AVX-512 F, BW, DQ, VL, VNNI
  kFeatureVbmi = 1u << 2,    // AVX512_VBMI and GFNI (every CPU with the one has the other but Cannon Lake)
  kFeatureBf16 = 1u << 3,    // AVX512_BF16
  kFeatureAmx = 1u << 4,     // AMX-TILE and AMX-INT8, with the OS's permission to use the tiles
};
using FeatureMask = uint32_t;

// Every instruction-set family, once: X(enumerator, name, features its kernels need). The
// enum, kAllIsas, the names, each family's features and the namespaces the modules declare
// their kernel tables in (src/cpu/registry.h) all come from this list, so a new family is a
// line here, its feature's detection in cpu.cpp, its CMake flags and its kernel files.
//   Scalar      portable C++: the reference every fast path must match bit for bit
//   Avx2        AVX2 + FMA + F16C + BMI2
//   Avx512      Avx2 + AVX-512 F, BW, DQ, VL and VNNI (Ice Lake, Cascade Lake, Zen 4 and later)
//   Avx512Vbmi  Avx512 + AVX512_VBMI and GFNI (vpermb byte tables, gf2p8affineqb bit moves;
//               Ice Lake, Zen 4 and later; not on Cascade Lake)
//   Avx512Bf16  Avx512 + AVX512_BF16 (vdpbf16ps; not on Ice Lake)
//   Amx         Avx512 + AMX-TILE and AMX-INT8 (tdpbusd / tdpbssd on 16 x 64 byte tiles; Intel
//               Xeon from Sapphire Rapids on; no AMD CPU so far)
// (X receives the list's trailing arguments after its own three.)
#define FIXQ_ISA_FAMILIES(X, ...)                                                                          \
  X(Scalar, scalar, 0, __VA_ARGS__)                                                                       \
  X(Avx2, avx2, ::fixq::kFeatureAvx2, __VA_ARGS__)                                                        \
  X(Avx512, avx512, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512, __VA_ARGS__)                           \
  X(Avx512Vbmi, avx512vbmi, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512 | ::fixq::kFeatureVbmi, __VA_ARGS__) \
  X(Avx512Bf16, avx512bf16, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512 | ::fixq::kFeatureBf16, __VA_ARGS__) \
  X(Amx, amx, ::fixq::kFeatureAvx2 | ::fixq::kFeatureAvx512 | ::fixq::kFeatureAmx, __VA_ARGS__)

enum class Isa : uint8_t {
#define FIXQ_ISA_ENUMERATOR_(e, name, features, ...) e,
  FIXQ_ISA_FAMILIES(FIXQ_ISA_ENUMERATOR_, )
#undef FIXQ_ISA_ENUMERATOR_
};

// Every family, in the order tests and reports list them.
inline constexpr auto kAllIsas = std::to_array<Isa>({
#define FIXQ_ISA_LISTED_(e, name, features, ...) Isa::e,
    FIXQ_ISA_FAMILIES(FIXQ_ISA_LISTED_, )
#undef FIXQ_ISA_LISTED_
});

// The family's name in FIXQ_ISA_FAMILIES: "scalar", "avx2", "avx512", ...
std::string to_string(Isa isa);
// Parses a name of to_string; throws fixq::Error otherwise.
Isa parse_isa(std::string_view name);

// The features a family's kernels need.
FeatureMask isa_features(Isa isa);
// The features this CPU (and OS: AVX state saved by XSAVE) has. FIXQ_CPU_FEATURES=<family>
// narrows them to that family's, to run the tests as on an older CPU.
FeatureMask cpu_features();
// Whether this CPU can run the kernels of that family.
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
