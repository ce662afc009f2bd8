// fixq's own exp, sigmoid and tanh (src/gru/float/math.h) against the exact functions,
// computed in double (whose error, < 1e-16 relative, is far below a float ulp): the
// largest error in float ulps over every 997th float of the range where each function
// varies, and the exact results at the edges (0, infinities, subnormals, NaN).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gru/float/math.h"

namespace fixq {
namespace {

using gru_float::ScalarOps;

float exp_fixq(float x) { return gru_float::exp_f32(ScalarOps{}, x); }
float sigmoid_fixq(float x) { return gru_float::sigmoid_f32(ScalarOps{}, x); }
float tanh_fixq(float x) { return gru_float::tanh_f32(ScalarOps{}, x); }

// |got - exact| in units of the last place of the float nearest `exact` (a subnormal's ulp
// is the smallest subnormal).
double ulp_error(float got, double exact) {
  const float near = static_cast<float>(exact);
  const int e = near == 0.0f ? -149 : std::max(std::ilogb(near) - 23, -149);
  return std::fabs(static_cast<double>(got) - exact) / std::ldexp(1.0, e);
}

// The largest ulp error of f against the exact g over every 997th float in [lo, hi] (997 is
// prime, so the samples cover every pattern of the low mantissa bits).
template <class F, class G>
double max_ulp(F f, G g, float lo, float hi, float* worst_x) {
  double worst = 0.0;
  auto scan = [&](float from, float to) {  // 0 <= from <= to, both signs
    for (uint32_t b = std::bit_cast<uint32_t>(from); b <= std::bit_cast<uint32_t>(to); b += 997) {
      for (float x : {std::bit_cast<float>(b), -std::bit_cast<float>(b)}) {
        if (x < lo || x > hi) continue;
        const double err = ulp_error(f(x), g(static_cast<double>(x)));
        if (err > worst) {
          worst = err;
          *worst_x = x;
        }
      }
    }
  };
  scan(0.0f, std::max(std::fabs(lo), std::fabs(hi)));
  return worst;
}

TEST(FloatMath, ExpWithinOneUlpWhereverTheResultIsNormal) {
  float at = 0.0f;
  // exp(x) is a normal float for x in [-87.33, 88.72].
  const double err = max_ulp(exp_fixq, [](double x) { return std::exp(x); }, -87.3f, 88.72f, &at);
  std::printf("    exp: max error %.3f ulp at %.9g\n", err, static_cast<double>(at));
  EXPECT_LE(err, 1.0) << "at " << at;
}

TEST(FloatMath, ExpEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_fixq(0.0f), 1.0f);
  EXPECT_EQ(exp_fixq(-0.0f), 1.0f);
  EXPECT_EQ(exp_fixq(88.73f), inf);  // past ln(FLT_MAX) = 88.7228
  EXPECT_EQ(exp_fixq(1000.0f), inf);
  EXPECT_EQ(exp_fixq(inf), inf);
  EXPECT_EQ(exp_fixq(-inf), 0.0f);
  EXPECT_EQ(exp_fixq(-104.0f), 0.0f);  // below half the smallest subnormal
  EXPECT_TRUE(std::isnan(exp_fixq(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(exp_fixq(88.72f), 3.0e38f);
  // Subnormal results are rounded once: within one subnormal step of the exact value.
  for (float x = -103.0f; x < -87.4f; x += 0.37f) EXPECT_LE(ulp_error(exp_fixq(x), std::exp(double{x})), 1.0) << x;
}

TEST(FloatMath, SigmoidWithinTwoAndAHalfUlpWhereverTheResultIsNormal) {
  float at = 0.0f;
  // sigmoid(v) is normal for v > -87.3; above 17.33 it rounds to 1.
  const double err = max_ulp(sigmoid_fixq, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, -87.3f, 20.0f, &at);
  std::printf("    sigmoid: max error %.3f ulp at %.9g\n", err, static_cast<double>(at));
  EXPECT_LE(err, 2.5) << "at " << at;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(sigmoid_fixq(0.0f), 0.5f);
  EXPECT_EQ(sigmoid_fixq(30.0f), 1.0f);
  EXPECT_EQ(sigmoid_fixq(inf), 1.0f);
  EXPECT_EQ(sigmoid_fixq(-inf), 0.0f);
  EXPECT_EQ(sigmoid_fixq(-200.0f), 0.0f);
}

TEST(FloatMath, TanhWithinTwoUlpEverywhere) {
  float at = 0.0f;
  // Near 0 the scan reaches the smallest floats (tanh(x) = x there); past 9.01 it is +-1.
  const double err = max_ulp(tanh_fixq, [](double x) { return std::tanh(x); }, -10.0f, 10.0f, &at);
  std::printf("    tanh: max error %.3f ulp at %.9g\n", err, static_cast<double>(at));
  EXPECT_LE(err, 2.0) << "at " << at;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(std::bit_cast<uint32_t>(tanh_fixq(0.0f)), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(tanh_fixq(-0.0f)), 0x80000000u);
  EXPECT_EQ(tanh_fixq(1e-30f), 1e-30f);
  EXPECT_EQ(tanh_fixq(20.0f), 1.0f);
  EXPECT_EQ(tanh_fixq(-20.0f), -1.0f);
  EXPECT_EQ(tanh_fixq(inf), 1.0f);
  EXPECT_EQ(tanh_fixq(-inf), -1.0f);
  EXPECT_TRUE(std::isnan(tanh_fixq(std::numeric_limits<float>::quiet_NaN())));
  // Odd, bit for bit.
  for (float x = 0.001f; x < 12.0f; x *= 1.07f) EXPECT_EQ(tanh_fixq(-x), -tanh_fixq(x)) << x;
}

}  // namespace
}  // namespace fixq
