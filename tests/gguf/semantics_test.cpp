// What the formats mean, checked without ggml: values on a format's grid come back
// exactly, quantization error shrinks with the bits, and every dot product equals the
// dot product of the dequantized operands, computed in double, to float accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fixq/gguf.h"
#include "fixq/metrics.h"
#include "gguf_test_util.h"

namespace fixq::gguf {
namespace {

std::vector<float> gaussian(std::size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Blocks whose values lie on the format's own grid (largest magnitude first, so that the
// scale is exactly 1) are reproduced exactly.
TEST(GgufSemantics, GridValuesRoundTripExactly) {
  std::mt19937 rng(1);
  // TQ1_0 / TQ2_0: the ternary grid {-1, 0, 1} with d = |x| max = 1.
  const std::map<Type, std::pair<int, int>> grids = {{Type::Q4_0, {-8, 7}},      {Type::Q5_0, {-16, 15}},
                                                     {Type::Q8_0, {-127, 127}},  {Type::Q8_1, {-127, 127}},
                                                     {Type::Q8_K, {-127, 127}},  {Type::TQ1_0, {-1, 1}},
                                                     {Type::TQ2_0, {-1, 1}}};
  for (const auto& [type, range] : grids) {
    const int64_t block = traits(type).block_elems;
    std::vector<float> x(static_cast<std::size_t>(4 * block));
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = i % static_cast<std::size_t>(block) == 0
                 ? static_cast<float>(range.first == -127 ? 127 : range.first)  // sets d = +-1
                 : static_cast<float>(range.first + static_cast<int>(rng() % static_cast<uint32_t>(range.second - range.first + 1)));
    EXPECT_EQ(dequantize(type, quantize(type, x)), x) << traits(type).name;
  }
  // MXFP4 / NVFP4: E2M1 values with a maximum of 6 in every block / sub-block of 16, so the
  // scale is 1 (E8M0 exponent 0, UE4M3 code 0x38).
  const float e2m1[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  std::vector<float> x(128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 16 == 0) ? 6.0f : e2m1[rng() % 8] * ((rng() & 1) ? 1.0f : -1.0f);
  EXPECT_EQ(dequantize(Type::MXFP4, quantize(Type::MXFP4, x)), x);
  EXPECT_EQ(dequantize(Type::NVFP4, quantize(Type::NVFP4, x)), x);
  // IQ4_XS: 32 * kvalues_iq4nl values with -127 * 32 first in each sub-block: the scale
  // search finds the exact fit 32 (id = 1/32 is one of its trial scales), the super-block
  // scale is d = -32 / 32 = -1 and every scale code ls = 0, so dl = -1 * (0 - 32) = 32.
  const int iq4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  std::vector<float> g(256);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = 32.0f * static_cast<float>(i % 32 == 0 ? -127 : iq4[rng() % 16]);
  EXPECT_EQ(dequantize(Type::IQ4_XS, quantize(Type::IQ4_XS, g)), g);
}

// SQNR of N(0, 1) data, in dB, for each format: a floor well below what the format
// reaches (a broken quantizer loses far more), and more bits never lose.
TEST(GgufSemantics, ErrorShrinksWithTheBits) {
  const std::vector<float> x = gaussian(256 * 64, 2);
  // Ternary N(0, 1) data keeps only the values beyond amax / 2 (~1.4): ~2.3 dB.
  const std::map<std::string, double> floor_db = {
      {"tq1_0", 1.5}, {"tq2_0", 1.5}, {"q2_K", 7},   {"q3_K", 12},   {"q4_0", 18}, {"q4_1", 18},
      {"iq4_nl", 18}, {"iq4_xs", 18}, {"mxfp4", 15}, {"nvfp4", 16},  {"q4_K", 20}, {"q5_0", 24},
      {"q5_1", 24},   {"q5_K", 26},   {"q6_K", 32},  {"q8_0", 38},   {"q8_1", 38}, {"q8_K", 38}};
  std::map<std::string, double> got;
  for (const TypeTraits& t : all_types()) {
    const std::vector<float> y = dequantize(t.type, quantize(t.type, x));
    got[std::string(t.name)] = sqnr_db(x.data(), y.data(), x.size());
    EXPECT_GT(got[std::string(t.name)], floor_db.at(std::string(t.name))) << t.name;
  }
  EXPECT_LT(got["q2_K"], got["q3_K"]);
  EXPECT_LT(got["q3_K"], got["q4_K"]);
  EXPECT_LT(got["q4_K"], got["q5_K"]);
  EXPECT_LT(got["q5_K"], got["q6_K"]);
  EXPECT_LT(got["q6_K"], got["q8_0"]);
  EXPECT_LT(got["q4_0"], got["q5_0"]);
  EXPECT_LT(got["q4_1"], got["q5_1"]);
  EXPECT_LT(got["tq1_0"], got["q2_K"]);
  EXPECT_LT(got["mxfp4"], got["nvfp4"]);  // a finer scale (16 values, 3 mantissa bits) helps
  EXPECT_EQ(got["tq1_0"], got["tq2_0"]);  // the same values, packed differently
}

// dot(x, y) against sum(dequant(x) * dequant(y)) in double. The Q4_1 / Q5_1 min term
// uses y's stored s = fp16(d * sum(q)), so those pairs get fp16's relative 2^-11 on
// top of float accumulation.
TEST(GgufSemantics, DotIsTheDotOfTheDequantizedOperands) {
  const std::vector<float> a = gaussian(256 * 16, 3, 2.0f), b = gaussian(256 * 16, 4, 0.5f);
  for (const fixq::test::KernelPath& path : fixq::test::kernel_paths()) {
    fixq::test::PathScope scope(path);
    for (const TypeTraits& t : all_types()) {
      if (!t.dot_type) continue;
      const std::vector<std::byte> x = quantize(t.type, a), y = quantize(*t.dot_type, b);
      const std::vector<float> dx = dequantize(t.type, x), dy = dequantize(*t.dot_type, y);
      double exact = 0.0, magnitude = 0.0;
      for (std::size_t i = 0; i < dx.size(); ++i) {
        exact += static_cast<double>(dx[i]) * dy[i];
        magnitude += std::fabs(static_cast<double>(dx[i]) * dy[i]);
      }
      const bool has_s = *t.dot_type == Type::Q8_1;
      const double tolerance = (has_s ? 2e-3 : 1e-5) * magnitude;
      EXPECT_NEAR(dot(t.type, x, y), exact, tolerance) << t.name << " on " << path.name();
    }
  }
}

}  // namespace
}  // namespace fixq::gguf
