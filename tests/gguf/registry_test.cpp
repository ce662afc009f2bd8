// The GGUF kernel list (src/gguf/registry.cpp): an entry for every family, the SIMDe build
// of every AVX-512 family installed, and on every kernel path the family's own kernel for
// each operation it provides, so that the golden, bit-identity and bad-input tests that ran
// on a path exercised that family's kernels (natively where this CPU has them, through
// SIMDe everywhere).
#include <gtest/gtest.h>

#include <string>

#include "fixq/cpu.h"
#include "fixq/kernels.h"
#include "fixq/gguf.h"
#include "gguf/kernels.h"
#include "support/registry_checks.h"

namespace fixq::gguf {
namespace {

using detail::GgufKernels;

TEST(GgufRegistry, EveryFamilyHasAnEntryAndItsSimdeBuild) { test::expect_complete(detail::registry()); }

TEST(GgufRegistry, EveryFamilyRunsItsOwnKernelsOnItsPaths) {
  for (const TypeTraits& t : all_types()) {
    const auto i = static_cast<std::size_t>(t.type);
    const std::string name(t.name);
    test::expect_each_family_runs_its_own(detail::registry(), [i](const GgufKernels& k) { return k.format[i].quantize; },
                                          name + " quantize");
    test::expect_each_family_runs_its_own(detail::registry(), [i](const GgufKernels& k) { return k.format[i].dequantize; },
                                          name + " dequantize");
    if (!t.dot_type) continue;
    test::expect_each_family_runs_its_own(detail::registry(), [i](const GgufKernels& k) { return k.format[i].dot; },
                                          name + " dot");
    test::expect_each_family_runs_its_own(detail::registry(), [i](const GgufKernels& k) { return k.format[i].matvec; },
                                          name + " matvec");
  }
}

// The types with AVX512_VBMI kernels of their own: the codebook formats (vpermb lookups; the
// single dot of IQ4_XS stays the AVX-512 one) and Q3_K ... Q6_K (vpermb byte reorders,
// dot_kquants_avx512vbmi.cpp). active_kernel_family names that family on its path and the
// AVX-512 one below it; Q2_K, TQ1_0, TQ2_0 and every dequantizer stay AVX-512.
TEST(GgufRegistry, VbmiKernelsRunOnTheVbmiPaths) {
  struct Expect {
    Type type;
    bool vbmi_dot;
  };
  const Expect vbmi[] = {{Type::IQ4_NL, true}, {Type::IQ4_XS, false}, {Type::MXFP4, true}, {Type::NVFP4, true},
                         {Type::Q3_K, true},   {Type::Q4_K, true},    {Type::Q5_K, true},  {Type::Q6_K, true}};
  for (const fixq::test::KernelPath& p : fixq::test::kernel_paths()) {
    if (p.isa != Isa::Avx512Vbmi && p.isa != Isa::Avx512) continue;
    fixq::test::PathScope scope(p);
    for (const Expect& e : vbmi) {
      const std::string at = std::string(traits(e.type).name) + " on " + p.name();
      EXPECT_EQ(active_kernel_family(e.type, "matvec"), to_string(p.isa)) << at;
      EXPECT_EQ(active_kernel_family(e.type, "dot"), e.vbmi_dot ? to_string(p.isa) : "avx512") << at;
      EXPECT_EQ(active_kernel_family(e.type, "dequantize"), "avx512") << at;
    }
    for (Type type : {Type::Q2_K, Type::TQ1_0, Type::TQ2_0})
      EXPECT_EQ(active_kernel_family(type, "matvec"), "avx512") << traits(type).name << " on " << p.name();
  }
}

// fixq info's "gguf dot" line names every family in use and the types of the minority
// ones: two families on the VBMI path, one on the others (the BF16 and AMX families build
// on the AVX-512 one, not on VBMI, and bring no GGUF kernels).
// The family a path's GGUF kernels come from where it brings none of its own: the BF16 and
// AMX families extend AVX-512's; the aarch64 families have no GGUF kernels yet.
std::string gguf_family(Isa isa) {
  if (isa == Isa::Avx512Bf16 || isa == Isa::Amx) return "avx512";
  if (isa_architecture(isa) == "aarch64") return "scalar";
  return to_string(isa);
}

TEST(GgufRegistry, InfoNamesTheFamiliesOfTheDots) {
  for (const fixq::test::KernelPath& p : fixq::test::kernel_paths()) {
    fixq::test::PathScope scope(p);
    const std::string line = active_kernel("gguf dot");
    if (p.isa == Isa::Avx512Vbmi)
      EXPECT_EQ(line, "avx512; avx512vbmi: q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, mxfp4, nvfp4") << p.name();
    else
      EXPECT_EQ(line, gguf_family(p.isa)) << p.name();
    EXPECT_EQ(active_kernel("gguf dequantize"),
              p.isa == Isa::Avx2 || gguf_family(p.isa) == "scalar" ? gguf_family(p.isa) : "avx512")
        << p.name();
  }
}

}  // namespace
}  // namespace fixq::gguf
