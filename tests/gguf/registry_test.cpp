// The GGUF kernel list (src/gguf/registry.cpp): an entry for every family, the SIMDe build
// of every AVX-512 family installed, and on every kernel path the family's own kernel for
// each operation it provides, so that the golden, bit-identity and bad-input tests that ran
// on a path exercised that family's kernels (natively where this CPU has them, through
// SIMDe everywhere).
#include <gtest/gtest.h>

#include <string>

#include "fixq/cpu.h"
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

// The table formats' matvec has an AVX512_VBMI kernel of its own (vpermb lookups), and so
// has the single dot of all but IQ4_XS: active_kernel_family names it on that path, the
// AVX-512 one below it.
TEST(GgufRegistry, TableFormatsRunTheVbmiKernelsOnTheVbmiPaths) {
  for (const fixq::test::KernelPath& p : fixq::test::kernel_paths()) {
    if (p.isa != Isa::Avx512Vbmi && p.isa != Isa::Avx512) continue;
    fixq::test::PathScope scope(p);
    for (Type type : {Type::IQ4_NL, Type::IQ4_XS, Type::MXFP4, Type::NVFP4}) {
      EXPECT_EQ(active_kernel_family(type, "matvec"), to_string(p.isa)) << traits(type).name << " on " << p.name();
      EXPECT_EQ(active_kernel_family(type, "dot"), type == Type::IQ4_XS ? "avx512" : to_string(p.isa))
          << traits(type).name << " on " << p.name();
      EXPECT_EQ(active_kernel_family(type, "dequantize"), "avx512") << traits(type).name << " on " << p.name();
    }
  }
}

// Q3_K ... Q6_K's dot and matvec have AVX512_VBMI kernels of their own (vpermb byte
// reorders, dot_kquants_avx512vbmi.cpp); Q2_K, TQ1_0 and TQ2_0 keep the AVX-512 ones.
TEST(GgufRegistry, KQuantsRunTheVbmiKernelsOnTheVbmiPaths) {
  for (const fixq::test::KernelPath& p : fixq::test::kernel_paths()) {
    if (p.isa != Isa::Avx512Vbmi && p.isa != Isa::Avx512) continue;
    fixq::test::PathScope scope(p);
    for (Type type : {Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K}) {
      EXPECT_EQ(active_kernel_family(type, "matvec"), to_string(p.isa)) << traits(type).name << " on " << p.name();
      EXPECT_EQ(active_kernel_family(type, "dot"), to_string(p.isa)) << traits(type).name << " on " << p.name();
      EXPECT_EQ(active_kernel_family(type, "dequantize"), "avx512") << traits(type).name << " on " << p.name();
    }
    for (Type type : {Type::Q2_K, Type::TQ1_0, Type::TQ2_0})
      EXPECT_EQ(active_kernel_family(type, "matvec"), "avx512") << traits(type).name << " on " << p.name();
  }
}

// fixq info's "gguf dot" line names every family in use and the types of the minority
// ones: two families on the VBMI path, one on the others (the BF16 family builds on the
// AVX-512 one, not on VBMI).
TEST(GgufRegistry, InfoNamesTheFamiliesOfTheDots) {
  for (const fixq::test::KernelPath& p : fixq::test::kernel_paths()) {
    fixq::test::PathScope scope(p);
    const std::string line = active_kernel("gguf dot");
    if (p.isa == Isa::Avx512Vbmi)
      EXPECT_EQ(line, "avx512; avx512vbmi: q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, mxfp4, nvfp4") << p.name();
    else
      EXPECT_EQ(line, p.isa == Isa::Avx512Bf16 ? "avx512" : to_string(p.isa)) << p.name();
    EXPECT_EQ(active_kernel("gguf dequantize"), p.isa == Isa::Scalar || p.isa == Isa::Avx2 ? to_string(p.isa) : "avx512")
        << p.name();
  }
}

}  // namespace
}  // namespace fixq::gguf
