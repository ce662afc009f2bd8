// Parameters from ranges: never clip, zero exactly representable, largest power-of-two
// exponent, clear errors for bad ranges and schemes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "fixq/error.h"
#include "fixq/quant.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

QuantParams one(const QuantScheme& s, float lo, float hi) {
  const Range r{lo, hi};
  return params_from_ranges(s, Shape{4}, std::span<const Range>(&r, 1));
}

bool covers(const QuantScheme& s, float scale, int32_t zp, float lo, float hi) {
  return dequantize_value(s.format.qmin(), scale, zp) <= std::min(lo, 0.0f) &&
         dequantize_value(s.format.qmax(), scale, zp) >= std::max(hi, 0.0f);
}

// Random range: sometimes one-sided, sometimes straddling zero, magnitudes 1e-6..1e6.
Range random_range(std::mt19937& rng) {
  std::uniform_real_distribution<float> lg(-6.0f, 6.0f);
  const float a = std::pow(10.0f, lg(rng)), b = std::pow(10.0f, lg(rng));
  switch (rng() % 4) {
    case 0: return {-a, b};
    case 1: return {std::min(a, b), std::max(a, b)};
    case 2: return {-std::max(a, b), -std::min(a, b)};
    default: return {-a, a};
  }
}

TEST(IntFormat, RangesAndBadBits) {
  for (int b = 2; b <= 16; ++b) {
    EXPECT_EQ(IntFormat::make(b, true).qmin(), -(1 << (b - 1)));
    EXPECT_EQ(IntFormat::make(b, true).qmax(), (1 << (b - 1)) - 1);
    EXPECT_EQ(IntFormat::make(b, false).qmin(), 0);
    EXPECT_EQ(IntFormat::make(b, false).qmax(), (1 << b) - 1);
  }
  for (int b : {0, 1, 17, -3, 32}) {
    try {
      IntFormat::make(b, true);
      FAIL() << b;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("2..16 bits"), std::string::npos) << e.what();
    }
  }
}

TEST(ParamsFromRange, NeverClipAndZeroIsExact) {
  std::mt19937 rng(11);
  for (int bits = 2; bits <= 16; ++bits)
    for (bool sgn : {true, false})
      for (Symmetry sym : {Symmetry::Asymmetric, Symmetry::Symmetric})
        for (ScaleKind kind : {ScaleKind::Multiplier, ScaleKind::PowerOfTwo})
          for (int i = 0; i < 400; ++i) {
            const QuantScheme s = QuantScheme::make(bits, sgn, sym, kind);
            const Range r = random_range(rng);
            const QuantParams p = one(s, r.min, r.max);
            const float sc = p.scale[0];
            const int32_t zp = p.zero_point[0];
            ASSERT_TRUE(covers(s, sc, zp, r.min, r.max))
                << s.format.name() << " " << to_string(sym) << " " << to_string(kind) << " [" << r.min << ", " << r.max << "] -> " << sc << " " << zp;
            ASSERT_GE(zp, s.format.qmin());
            ASSERT_LE(zp, s.format.qmax());
            ASSERT_EQ(dequantize_value(zp, sc, zp), 0.0f);
            if (sym == Symmetry::Symmetric) {
              ASSERT_EQ(zp, s.symmetric_zero_point());
            }
            if (kind == ScaleKind::Multiplier && sym == Symmetry::Asymmetric) {
              // Tight: at most one step of the grid is spent on rounding the zero point.
              const double width = static_cast<double>(std::max(r.max, 0.0f)) - std::min(r.min, 0.0f);
              ASSERT_LE(sc, width / (s.format.qmax() - s.format.qmin() - 2) * (1 + 1e-6));
            }
          }
}

// The largest exponent: at e + 1 no zero point in range can cover [lo, hi]; checked by
// trying every zero point.
TEST(ParamsFromRange, PowerOfTwoUsesLargestNonClippingExponent) {
  std::mt19937 rng(12);
  for (int bits : {2, 3, 4, 8, 10}) {
    for (bool sgn : {true, false}) {
      for (Symmetry sym : {Symmetry::Asymmetric, Symmetry::Symmetric}) {
        const QuantScheme s = QuantScheme::make(bits, sgn, sym, ScaleKind::PowerOfTwo);
        for (int i = 0; i < 300; ++i) {
          const Range r = random_range(rng);
          const QuantParams p = one(s, r.min, r.max);
          const int e = p.exponent[0];
          ASSERT_EQ(p.scale[0], std::ldexp(1.0f, -e));
          const float finer = std::ldexp(1.0f, -(e + 1));
          bool any = false;
          if (sym == Symmetry::Symmetric) {
            any = covers(s, finer, s.symmetric_zero_point(), r.min, r.max);
          } else {
            for (int32_t z = s.format.qmin(); z <= s.format.qmax() && !any; ++z) any = covers(s, finer, z, r.min, r.max);
          }
          ASSERT_FALSE(any) << "exponent " << e + 1 << " would also cover [" << r.min << ", " << r.max << "]";
        }
      }
    }
  }
}

TEST(ParamsFromRange, WorkedExamples) {  // docs/spec.md 9.3 has the first one
  // int8 asymmetric over [-1, 3]: s0 = 4/255, ideal zero point -128 + 63.75. Zero point -64
  // leaves 191 steps for 3 (scale 3/191); -63 would leave 65 steps for -1 and 190 for 3
  // (scale 3/190): -64 wins, with scale 3/191 rounded up to cover in float.
  const QuantParams a = one(QuantScheme::make(8, true, Symmetry::Asymmetric, ScaleKind::Multiplier), -1.0f, 3.0f);
  EXPECT_EQ(a.zero_point[0], -64);
  EXPECT_NEAR(a.scale[0], 3.0 / 191.0, 1e-8);
  EXPECT_GE(a.scale[0] * 191.0f, 3.0f);
  // int8 symmetric over [-0.5, 2]: scale 2/127, zero point 0.
  const QuantParams s = one(QuantScheme::make(8, true, Symmetry::Symmetric, ScaleKind::Multiplier), -0.5f, 2.0f);
  EXPECT_EQ(s.zero_point[0], 0);
  EXPECT_NEAR(s.scale[0], 2.0 / 127.0, 1e-7);
  // pow2 symmetric int8 over [-1, 1]: 127 * 2^-e >= 1 -> e = 6 (2^-6 * 127 = 1.98; 2^-7 * 127 < 1).
  const QuantParams p = one(QuantScheme::make(8, true, Symmetry::Symmetric, ScaleKind::PowerOfTwo), -1.0f, 1.0f);
  EXPECT_EQ(p.exponent[0], 6);
  // pow2 asymmetric uint8 over [0, 1]: 255 * 2^-e >= 1 -> e = 7; [0, 1] takes 128 of the
  // 255 steps, and the zero point centres it: round(127.5 - 64) = 64 (ties to even).
  const QuantParams u = one(QuantScheme::make(8, false, Symmetry::Asymmetric, ScaleKind::PowerOfTwo), 0.0f, 1.0f);
  EXPECT_EQ(u.exponent[0], 7);
  EXPECT_EQ(u.zero_point[0], 64);
  // Ranges that exclude zero are widened to include it.
  const QuantParams w = one(QuantScheme::make(8, false, Symmetry::Asymmetric, ScaleKind::Multiplier), 2.0f, 4.0f);
  EXPECT_EQ(w.zero_point[0], 0);
  EXPECT_NEAR(w.scale[0], 4.0 / 255.0, 1e-6);
}

TEST(ParamsFromRange, BadRangesAreClearErrors) {
  const QuantScheme s = QuantScheme::make(8, true, Symmetry::Asymmetric, ScaleKind::Multiplier);
  expect_error([&] { one(s, 2.0f, 1.0f); }, "min 2 > max 1");
  expect_error([&] { one(s, std::nanf(""), 1.0f); }, "NaN");
  expect_error([&] { one(s, 0.0f, INFINITY); }, "not finite");
  expect_error([&] { one(s, 0.5f, 0.5f); }, "zero width");
  expect_error([&] { one(s, 0.0f, 0.0f); }, "zero width");
  expect_error([&] { one(s, 0.0f, 1e-44f); }, "float32 scale");  // subnormal scale
  const Range two[2] = {{0, 1}, {0, 2}};
  expect_error([&] { params_from_ranges(s, Shape{4}, two); }, "needs 1 ranges, got 2");
}

TEST(QuantScheme, GranularityShapesAndErrors) {
  QuantScheme s = QuantScheme::make(4, true, Symmetry::Symmetric, ScaleKind::Multiplier);
  const Shape t{3, 8, 5};
  EXPECT_EQ(s.param_shape(t), Shape{});
  s.granularity = Granularity::PerChannel;
  s.axis = 1;
  EXPECT_EQ(s.param_shape(t), Shape{8});
  s.axis = -1;
  EXPECT_EQ(s.param_shape(t), Shape{5});
  s.granularity = Granularity::PerToken;
  EXPECT_EQ(s.param_shape(t), (Shape{3, 8}));
  s.granularity = Granularity::PerGroup;
  s.axis = 1;
  s.group_size = 4;
  EXPECT_EQ(s.param_shape(t), (Shape{3, 2, 5}));
  s.group_size = 3;
  expect_error([&] { s.param_shape(t); }, "group size 3 does not divide axis 1 of extent 8");
  s.group_size = 0;
  expect_error([&] { s.param_shape(t); }, "group size >= 1");
  s.group_size = 4;
  s.axis = 3;
  expect_error([&] { s.param_shape(t); }, "axis 3 is out of range");
  expect_error([&] { QuantScheme::make(8, true, Symmetry::Symmetric, ScaleKind::Multiplier).param_shape(Shape{0, 4}); },
               "empty tensor");
  expect_error([&] { std::vector<float> x; params_from_tensor(x.data(), Shape{2, 0}, s); }, "empty tensor");
}

TEST(QuantParams, ValidateCatchesInconsistentArrays) {
  QuantParams p = one(QuantScheme::make(8, true, Symmetry::Asymmetric, ScaleKind::PowerOfTwo), -1.0f, 1.0f);
  p.validate();
  QuantParams bad = p;
  bad.scale[0] = 0.3f;
  expect_error([&] { bad.validate(); }, "is not 2^-");
  bad = p;
  bad.zero_point[0] = 300;
  expect_error([&] { bad.validate(); }, "outside the int8 range");
  bad = p;
  bad.scale[0] = -1.0f;
  expect_error([&] { bad.validate(); }, "positive normal float");
  bad = p;
  bad.scale.push_back(1.0f);
  expect_error([&] { bad.validate(); }, "scales");
}

}  // namespace
}  // namespace fixq
