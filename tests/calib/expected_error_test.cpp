// The closed-form expected quantization error against numeric integration with the
// library's own quantize_value / dequantize_value.
#include "calib/expected_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "fixq/quant.h"

namespace fixq::calib_detail {
namespace {

// count * mean of (x - dequantize(quantize(x)))^2 over `points` midpoints of [lo, hi]. The
// integrand is continuous (|x - Q(x)| is half a step on both sides of a cell edge), so
// the midpoint rule converges quickly.
double numeric_error(const MassBin& b, float scale, int32_t zp, IntRange r, int points) {
  long double acc = 0;
  for (int j = 0; j < points; ++j) {
    const double x = b.lo + (j + 0.5) / points * (b.hi - b.lo);
    const float xf = static_cast<float>(x);
    const double d = x - dequantize_value(quantize_value(xf, scale, zp, r), scale, zp);
    acc += d * d;
  }
  return static_cast<double>(b.count * acc / points);
}

QuantParams one_slot(const QuantScheme& s, Range r) {
  return params_from_ranges(s, {1}, std::span<const Range>(&r, 1));
}

TEST(ExpectedError, MatchesNumericIntegrationWithQuantizeValue) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    QuantScheme s;
    s.format = IntFormat::make(2 + trial % 7, trial % 3 != 0);
    s.symmetry = trial % 2 ? Symmetry::Symmetric : Symmetry::Asymmetric;
    s.scale_kind = trial % 4 < 2 ? ScaleKind::Multiplier : ScaleKind::PowerOfTwo;
    const float a = static_cast<float>(std::min(-0.01, u(rng) * 3)),
                b = static_cast<float>(std::max(0.01, u(rng) * 3));
    const QuantParams p = one_slot(s, {a, b});
    // Bins inside, straddling and far outside the representable range, some narrower
    // than one step and some spanning many.
    std::vector<MassBin> bins;
    for (int k = 0; k < 6; ++k) {
      const double lo = u(rng) * 5, w = std::exp2(u(rng) * 6) * 0.05;
      bins.push_back({lo, lo + w, 1.0 + 10 * (u(rng) + 1)});
    }
    bins.push_back({a - 0.5, b + 0.5, 3.0});
    double expected = 0;
    for (const MassBin& bin : bins)
      expected += numeric_error(bin, p.scale[0], p.zero_point[0], s.format.range(), 20000);
    const double got = expected_squared_error(bins, p.scale[0], p.zero_point[0], s.format.range());
    EXPECT_NEAR(got, expected, 1e-4 * expected + 1e-12) << "trial " << trial << " scheme " << s.format.name();
  }
}

TEST(ExpectedError, PointMassesMatchQuantizeValue) {
  QuantScheme s;  // int8 asymmetric float
  const QuantParams p = one_slot(s, {-1.0f, 3.0f});
  for (double x : {-5.0, -1.0, 0.0, 0.3, 1.2345, 2.999, 3.0, 7.5}) {
    const std::vector<MassBin> bins = {{x, x, 2.0}};
    const float xf = static_cast<float>(x);
    const double d = x - dequantize_value(quantize_value(xf, p.scale[0], p.zero_point[0], s.format.range()),
                                          p.scale[0], p.zero_point[0]);
    // |error| agrees up to the float32 rounding of the level that dequantize_value does.
    const double got =
        std::sqrt(expected_squared_error(bins, p.scale[0], p.zero_point[0], s.format.range()) / 2);
    EXPECT_NEAR(got, std::fabs(d), 0x1p-23 * std::max(1.0, std::fabs(x))) << x;
  }
}

TEST(ExpectedError, WholeCellsGiveStepSquaredOverTwelve) {
  // A bin covering exactly 100 whole cells inside the range: the classic s^2 / 12 per value.
  const double s = 0.01f;
  const std::vector<MassBin> bins = {{-50.5 * s, 49.5 * s, 4.0}};
  EXPECT_NEAR(expected_squared_error(bins, s, 0, {-128, 127}), 4.0 * s * s / 12.0, 1e-15);
  // Shifted by half a cell, the two half cells at the ends add up to one whole cell.
  const std::vector<MassBin> shifted = {{-50.0 * s, 50.0 * s, 4.0}};
  EXPECT_NEAR(expected_squared_error(shifted, s, 0, {-128, 127}), 4.0 * s * s / 12.0, 1e-15);
}

}  // namespace
}  // namespace fixq::calib_detail
