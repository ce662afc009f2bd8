// The instruction-set families of this build (fixq/cpu.h): the target architecture's and
// scalar, their names, the errors for a family this build or this CPU lacks, and, where the
// environment says what the CPU must have (scripts/test_aarch64.sh runs qemu's -cpu max and
// -cpu cortex-a72 with FIXQ_TEST_EXPECT_ISAS), the detection itself.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "fixq/cpu.h"
#include "fixq/error.h"

namespace fixq {
namespace {

std::set<std::string> supported_families() {
  std::set<std::string> s;
  for (Isa isa : kAllIsas)
    if (cpu_supports(isa)) s.insert(to_string(isa));
  return s;
}

TEST(Families, BuiltAreScalarAndTheTargetArchitecturesOwn) {
  ASSERT_FALSE(kAllIsas.empty());
  EXPECT_EQ(kAllIsas[0], Isa::Scalar);
  EXPECT_TRUE(cpu_supports(Isa::Scalar));
  for (Isa isa : kAllIsas) {
    EXPECT_TRUE(isa_built(isa));
    EXPECT_TRUE(isa_architecture(isa) == "any" || isa_architecture(isa) == FIXQ_TARGET_ARCH) << to_string(isa);
    EXPECT_EQ(parse_isa(to_string(isa)), isa);
  }
#if defined(__x86_64__)
  EXPECT_EQ(kAllIsas.size(), 6u);
  EXPECT_FALSE(isa_built(Isa::Neon));
  EXPECT_FALSE(cpu_supports(Isa::Dotprod));
#elif defined(__aarch64__)
  EXPECT_EQ(kAllIsas.size(), 5u);
  EXPECT_FALSE(isa_built(Isa::Avx2));
  EXPECT_FALSE(cpu_supports(Isa::Avx2));
  EXPECT_TRUE(cpu_supports(Isa::Neon)) << "every aarch64 Linux CPU has Advanced SIMD";
#endif
}

TEST(Families, EveryFamilyKnownOnEveryArchitecture) {
  for (const char* name : {"scalar", "avx2", "avx512", "avx512vbmi", "avx512bf16", "amx", "neon", "dotprod", "i8mm", "armbf16"})
    EXPECT_EQ(to_string(parse_isa(name)), name);
  EXPECT_EQ(isa_architecture(Isa::Avx2), "x86_64");
  EXPECT_EQ(isa_architecture(Isa::I8mm), "aarch64");
  EXPECT_THROW(parse_isa("sve"), Error);
}

std::string error_of(Isa isa) {
  try {
    set_isa_override(isa);
  } catch (const Error& e) {
    return e.what();
  }
  set_isa_override(std::nullopt);
  return "";
}

TEST(Families, ForcingAnotherArchitecturesFamilyIsAClearError) {
  const Isa foreign = std::string(FIXQ_TARGET_ARCH) == "aarch64" ? Isa::Avx512 : Isa::Dotprod;
  const std::string e = error_of(foreign);
  EXPECT_NE(e.find("a family of " + isa_architecture(foreign)), std::string::npos) << e;
  EXPECT_NE(e.find(std::string("this build is for ") + FIXQ_TARGET_ARCH), std::string::npos) << e;
}

TEST(Families, ForcingAFamilyTheCpuLacksIsAClearError) {
  for (Isa isa : kAllIsas) {
    const std::string e = error_of(isa);
    if (cpu_supports(isa)) {
      EXPECT_EQ(e, "") << to_string(isa);
    } else {
      EXPECT_NE(e.find("this CPU does not support them"), std::string::npos) << e;
    }
  }
}

// FIXQ_TEST_EXPECT_ISAS=neon,dotprod,...: exactly these families (and scalar) are detected.
TEST(Families, DetectionMatchesWhatTheCpuHas) {
  const char* env = std::getenv("FIXQ_TEST_EXPECT_ISAS");
  if (env == nullptr || *env == '\0') GTEST_SKIP() << "FIXQ_TEST_EXPECT_ISAS is not set (scripts/test_aarch64.sh sets it per qemu CPU)";
  std::set<std::string> want{"scalar"};
  std::stringstream ss(env);
  for (std::string f; std::getline(ss, f, ',');)
    if (!f.empty()) want.insert(f);
  EXPECT_EQ(supported_families(), want);
  const char* forced = std::getenv("FIXQ_ISA");
  Isa best = Isa::Scalar;
  for (Isa isa : kAllIsas)
    if (want.count(to_string(isa)) != 0) best = isa;
  EXPECT_EQ(to_string(best_isa()), to_string(best));
  if (forced != nullptr && *forced != '\0') {
    ASSERT_TRUE(forced_isa().has_value());
    EXPECT_EQ(to_string(*forced_isa()), forced);
  }
}

}  // namespace
}  // namespace fixq
