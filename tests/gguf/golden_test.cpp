// ggml's own outputs (tests/vectors/ggml, see its README.md): every format's
// quantized bytes, dequantized floats and dot products, matched bit for bit on every
// instruction set this CPU has. The entries of caveats.tsv are handled as that README says:
// `unspecified_in_ggml` IQ4_NL blocks are compared on d only (ggml packs uninitialised
// memory there), `nonfinite` dots must be NaN on both sides. IQ4_XS's d = -0.0 of all-zero
// rows and NVFP4's saturated scales (0x7E) are plain bytes and compared as such.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fixq/gguf.h"
#include "gguf_test_util.h"

namespace fixq::gguf {
namespace {

using test_util::bits;
using test_util::golden_bytes;
using test_util::golden_floats;
using test_util::golden_tsv;

constexpr int kRows = 64;
constexpr int kRowLen = 256;

// (file, row, block) of the caveats of one kind.
std::set<std::tuple<std::string, int, int>> caveats(const std::string& kind) {
  std::set<std::tuple<std::string, int, int>> out;
  for (const auto& f : golden_tsv("caveats.tsv")) {
    if (f.size() < 4) {
      ADD_FAILURE() << "caveats.tsv: malformed line";
      continue;
    }
    if (f[3] == kind) out.emplace(f[0], std::stoi(f[1]), f[2] == "-" ? -1 : std::stoi(f[2]));
  }
  return out;
}

std::string bin_name(const TypeTraits& t) { return std::string(t.name) + ".bin"; }

class Golden : public ::testing::TestWithParam<fixq::test::KernelPath> {
 protected:
  void SetUp() override { scope_.emplace(GetParam()); }
  std::optional<fixq::test::PathScope> scope_;
};

// types.tsv holds the types of the first set, types_more.tsv those added later (iq4_xs,
// tq1_0, tq2_0); together they are every format.
TEST_P(Golden, TraitsMatchTypesTsv) {
  int matched = 0;
  for (const char* table : {"types.tsv", "types_more.tsv"}) {
    for (const auto& f : golden_tsv(table)) {
      const TypeTraits& t = traits(f[0]);
      EXPECT_EQ(t.ggml_type, std::stoi(f[1])) << f[0];
      EXPECT_EQ(t.block_elems, std::stoi(f[2])) << f[0];
      EXPECT_EQ(t.block_bytes, std::stoul(f[3])) << f[0];
      EXPECT_EQ(packed_size(t.type, kRowLen), std::stoul(f[4])) << f[0];
      EXPECT_EQ(packed_size(t.type, kRows * kRowLen), std::stoul(f[6])) << f[0];
      EXPECT_EQ(t.ggml_dequantize, f[7] == "yes") << f[0];
      ++matched;
    }
  }
  EXPECT_EQ(matched, static_cast<int>(all_types().size()));
}

// Every byte of every block, except the caveat blocks, whose d must still match.
TEST_P(Golden, QuantizedBytesMatch) {
  const std::vector<float> x = golden_floats("inputs.f32");
  ASSERT_EQ(x.size(), static_cast<std::size_t>(kRows * kRowLen));
  const auto unspecified = caveats("unspecified_in_ggml");
  for (const TypeTraits& t : all_types()) {
    const std::vector<std::byte> want = golden_bytes(bin_name(t));
    const std::vector<std::byte> got = quantize(t.type, x);
    ASSERT_EQ(got.size(), want.size()) << t.name;
    const std::size_t row_bytes = packed_size(t.type, kRowLen);
    const int blocks_per_row = static_cast<int>(kRowLen / t.block_elems);
    int mismatched = 0;
    for (std::size_t off = 0; off < got.size(); off += t.block_bytes) {
      const int row = static_cast<int>(off / row_bytes);
      const int block = static_cast<int>(off % row_bytes / t.block_bytes);
      const bool d_only = unspecified.count({bin_name(t), row, block}) > 0;
      const std::size_t n = d_only ? 2 : t.block_bytes;  // d is the first fp16 of IQ4_NL
      if (std::memcmp(got.data() + off, want.data() + off, n) != 0 && ++mismatched <= 3)
        ADD_FAILURE() << t.name << " row " << row << " block " << block << " of " << blocks_per_row
                      << " differs from ggml" << (d_only ? " in d" : "");
    }
    EXPECT_EQ(mismatched, 0) << t.name;
  }
}

// ggml's choice for those blocks is unspecified; fixq's is documented: d = 0 and codes 8.
TEST_P(Golden, UnspecifiedIq4nlBlocksAreIndexEight) {
  const std::vector<float> x = golden_floats("inputs.f32");
  const std::vector<std::byte> got = quantize(Type::IQ4_NL, x);
  const auto unspecified = caveats("unspecified_in_ggml");
  EXPECT_FALSE(unspecified.empty());
  for (const auto& [file, row, block] : unspecified) {
    ASSERT_EQ(file, "iq4_nl.bin");
    const std::size_t off = static_cast<std::size_t>(row) * 144 + static_cast<std::size_t>(block) * 18;
    EXPECT_EQ(got[off], std::byte{0});
    EXPECT_EQ(got[off + 1], std::byte{0});
    for (int j = 2; j < 18; ++j) EXPECT_EQ(got[off + j], std::byte{0x88}) << row << " " << block;
  }
}

// The right-hand operands of the dots, quantized from set B.
TEST_P(Golden, ActivationSetMatches) {
  const std::vector<float> xb = golden_floats("inputs_b.f32");
  for (Type t : {Type::Q8_0, Type::Q8_1, Type::Q8_K}) {
    const std::string name = "inputs_b." + std::string(traits(t).name) + ".bin";
    EXPECT_TRUE(quantize(t, xb) == golden_bytes(name)) << name;
  }
}

TEST_P(Golden, DequantizedFloatsMatchBitForBit) {
  for (const TypeTraits& t : all_types()) {
    if (!t.ggml_dequantize) continue;  // q8_1: ggml has no dequantize_row_q8_1
    const std::vector<float> got = dequantize(t.type, golden_bytes(bin_name(t)));
    const std::vector<float> want = golden_floats(std::string(t.name) + ".dequant.f32");
    ASSERT_EQ(got.size(), want.size()) << t.name;
    int mismatched = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (bits(got[i]) != bits(want[i]) && ++mismatched <= 3)
        ADD_FAILURE() << t.name << " element " << i << ": " << got[i] << " != " << want[i];
    EXPECT_EQ(mismatched, 0) << t.name;
  }
}

TEST_P(Golden, DotsMatchGgmlGenericBitForBit) {
  const auto nonfinite = caveats("nonfinite");
  int pairs = 0;
  for (const TypeTraits& t : all_types()) {
    if (!t.dot_type) continue;
    const std::string yname(traits(*t.dot_type).name);
    const std::string file = "dot_" + std::string(t.name) + "_" + yname + ".f32";
    const std::vector<std::byte> x = golden_bytes(bin_name(t)), y = golden_bytes("inputs_b." + yname + ".bin");
    const std::vector<float> want = golden_floats(file);
    ASSERT_EQ(want.size(), static_cast<std::size_t>(kRows)) << file;
    const std::size_t xrow = packed_size(t.type, kRowLen), yrow = packed_size(*t.dot_type, kRowLen);
    for (int r = 0; r < kRows; ++r) {
      const float got = dot(t.type, std::span(x).subspan(r * xrow, xrow), std::span(y).subspan(r * yrow, yrow));
      if (nonfinite.count({file, r, -1})) {
        EXPECT_TRUE(std::isnan(got) && std::isnan(want[r])) << file << " row " << r;
      } else {
        EXPECT_EQ(bits(got), bits(want[r])) << file << " row " << r << ": " << got << " != " << want[r];
      }
    }
    ++pairs;
  }
  EXPECT_EQ(pairs, 16);
}

INSTANTIATE_TEST_SUITE_P(EveryIsa, Golden, ::testing::ValuesIn(fixq::test::kernel_paths()),
                         [](const ::testing::TestParamInfo<fixq::test::KernelPath>& i) { return i.param.name(); });

}  // namespace
}  // namespace fixq::gguf
