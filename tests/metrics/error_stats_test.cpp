// ErrorStats metrics against oracles computed independently in the test: exact values on
// hand-made vectors, long double recomputation on random data, and sums whose exact
// value is known in closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/metrics.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

constexpr double kInf = std::numeric_limits<double>::infinity();

ErrorStats stats_of(const std::vector<float>& x, const std::vector<float>& y) {
  ErrorStats s;
  s.add(x.data(), y.data(), x.size());
  return s;
}

// x = {1, -2, 3, 4}, y = {1.5, -2, 2, 4}: d = {-0.5, 0, 1, 0}, sum d^2 = 1.25,
// sum |d| = 1.5, sum x^2 = 30, sum y^2 = 26.25, sum xy = 27.5.
const std::vector<float> kHandX = {1, -2, 3, 4};
const std::vector<float> kHandY = {1.5f, -2, 2, 4};

TEST(ErrorStats, HandComputedVectorsGiveExactValues) {
  const ErrorStats s = stats_of(kHandX, kHandY);
  EXPECT_EQ(s.count(), 4u);
  EXPECT_DOUBLE_EQ(s.rmse(), std::sqrt(1.25 / 4));
  EXPECT_DOUBLE_EQ(s.nmse(), 1.25 / 30);
  EXPECT_EQ(s.mae(), 0.375);
  EXPECT_EQ(s.maxerr(), 1.0);
  EXPECT_DOUBLE_EQ(s.cosine(), 27.5 / std::sqrt(30 * 26.25));
  EXPECT_DOUBLE_EQ(s.sqnr_db(), 10 * std::log10(24.0));
}

TEST(ErrorStats, FreeFunctionsMatchTheAccumulator) {
  const ErrorStats s = stats_of(kHandX, kHandY);
  const float* x = kHandX.data();
  const float* y = kHandY.data();
  EXPECT_EQ(rmse(x, y, 4), s.rmse());
  EXPECT_EQ(nmse(x, y, 4), s.nmse());
  EXPECT_EQ(mae(x, y, 4), s.mae());
  EXPECT_EQ(maxerr(x, y, 4), s.maxerr());
  EXPECT_EQ(cosine(x, y, 4), s.cosine());
  EXPECT_EQ(sqnr_db(x, y, 4), s.sqnr_db());
}

TEST(ErrorStats, SqnrOfKnownSignalToNoiseRatio) {
  // Signal +-10, noise +-1 in every element: power ratio 100, i.e. 20 dB, nmse 1/100.
  std::vector<float> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 2 ? 10.0f : -10.0f;
    y[i] = x[i] + (i % 3 ? 1.0f : -1.0f);
  }
  const ErrorStats s = stats_of(x, y);
  EXPECT_DOUBLE_EQ(s.sqnr_db(), 20.0);
  EXPECT_DOUBLE_EQ(s.nmse(), 0.01);
  EXPECT_EQ(s.rmse(), 1.0);
  // Noise 2^-5 on a unit signal: ratio 2^10.
  std::vector<float> ones(64, 1.0f), near(64, 1.0f - 0x1p-5f);
  EXPECT_DOUBLE_EQ(sqnr_db(ones.data(), near.data(), 64), 10 * std::log10(1024.0));
}

TEST(ErrorStats, MatchesLongDoubleRecomputationOnRandomData) {
  std::mt19937_64 rng(12345);
  std::normal_distribution<float> signal(0.0f, 1.0f), noise(0.0f, 1e-3f);
  const size_t n = 1'000'000;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = signal(rng) * (i % 1000 == 0 ? 1e3f : 1.0f);  // a few large outliers
    y[i] = x[i] + noise(rng);
  }
  long double err2 = 0, abs_err = 0, ref2 = 0, app2 = 0, dot = 0, max_err = 0;
  ErrorStats::Histogram hist{};
  for (size_t i = 0; i < n; ++i) {
    const long double d = static_cast<long double>(x[i]) - y[i];
    err2 += d * d;
    abs_err += std::fabs(d);
    ref2 += static_cast<long double>(x[i]) * x[i];
    app2 += static_cast<long double>(y[i]) * y[i];
    dot += static_cast<long double>(x[i]) * y[i];
    max_err = std::max(max_err, std::fabs(d));
    const long double pos = std::fabs(d) * 5000;  // 150 buckets over 0.03
    ++hist[pos >= 149 ? 149 : static_cast<size_t>(pos)];
  }
  ErrorStats s;
  // Uneven pieces, so that the merge inside add() is exercised too.
  s.add(x.data(), y.data(), 333'333);
  s.add(x.data() + 333'333, y.data() + 333'333, n - 333'333);
  const auto rel = [](double got, long double want) {
    return static_cast<double>(std::fabs((got - want) / want));
  };
  EXPECT_EQ(s.count(), n);
  EXPECT_LT(rel(s.rmse(), std::sqrt(err2 / n)), 1e-14);
  EXPECT_LT(rel(s.nmse(), err2 / ref2), 1e-14);
  EXPECT_LT(rel(s.mae(), abs_err / n), 1e-14);
  EXPECT_EQ(s.maxerr(), static_cast<double>(max_err));
  EXPECT_LT(rel(s.cosine(), dot / std::sqrt(ref2 * app2)), 1e-14);
  EXPECT_LT(std::fabs(s.sqnr_db() - 10 * std::log10(static_cast<double>(ref2 / err2))), 1e-12);
  EXPECT_EQ(s.histogram(), hist);
}

TEST(ErrorStats, CompensatedSumsStayExactWhereNaiveDoubleDrifts) {
  // 2^22 identical errors: a naive double sum drifts by ~n*eps/4 ~ 1e-10 relative.
  const float d = 0.1f;
  std::vector<float> zeros(1 << 16, 0.0f), ds(1 << 16, d);
  ErrorStats s;
  for (int rep = 0; rep < 64; ++rep) s.add(zeros.data(), ds.data(), zeros.size());
  const double want = std::sqrt(static_cast<double>(d) * d);  // rmse of equal errors
  EXPECT_LT(std::fabs(s.rmse() - want) / want, 4e-16);
  EXPECT_LT(std::fabs(s.mae() - static_cast<double>(d)) / d, 4e-16);
  // One error of 1e4, then 2^20 errors of 2^-17 in the same call: each small square
  // (2^-34) is below half an ulp of 1e8, so a naive sum would stay at 1e8 and lose the
  // 2^-14 they add up to.
  std::vector<float> ref(1 + (1 << 20), 0.0f), approx(ref.size(), 0x1p-17f);
  approx[0] = 1e4f;
  ErrorStats t;
  t.add(ref.data(), approx.data(), ref.size());
  const long double want_rmse = std::sqrt((1e8L + 0x1p-14L) / ref.size());
  EXPECT_LT(std::fabs((t.rmse() - want_rmse) / want_rmse), 1e-15L);
}

TEST(ErrorStats, MergeEqualsAddingEverything) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f), e(-0.05f, 0.05f);
  std::vector<float> x(10'000), y(10'000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = u(rng);
    y[i] = x[i] + e(rng);
  }
  const ErrorStats all = stats_of(x, y);
  ErrorStats a, b, c;
  a.add(x.data(), y.data(), 1234);
  b.add(x.data() + 1234, y.data() + 1234, 5000);
  c.add(x.data() + 6234, y.data() + 6234, x.size() - 6234);
  ErrorStats merged;
  merged.merge(a);
  merged.merge(ErrorStats{});  // merging nothing changes nothing
  merged.merge(b);
  merged.merge(c);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.histogram(), all.histogram());
  EXPECT_EQ(merged.maxerr(), all.maxerr());
  for (auto metric : {&ErrorStats::rmse, &ErrorStats::nmse, &ErrorStats::mae,
                      &ErrorStats::cosine, &ErrorStats::sqnr_db})
    EXPECT_NEAR((merged.*metric)(), (all.*metric)(), 1e-15 * std::fabs((all.*metric)()));
  EXPECT_EQ(merged.quantile(0.5), all.quantile(0.5));
  EXPECT_EQ(merged.quantile(0.95), all.quantile(0.95));
}

TEST(ErrorStats, ZeroVectorsHaveDefinedMetrics) {
  const std::vector<float> zero(8, 0.0f), one(8, 1.0f), minus_one(8, -1.0f);
  const ErrorStats both_zero = stats_of(zero, zero);
  EXPECT_EQ(both_zero.rmse(), 0.0);
  EXPECT_EQ(both_zero.nmse(), 0.0);
  EXPECT_EQ(both_zero.cosine(), 1.0);
  EXPECT_EQ(both_zero.sqnr_db(), kInf);

  const ErrorStats zero_ref = stats_of(zero, one);
  EXPECT_EQ(zero_ref.nmse(), kInf);
  EXPECT_EQ(zero_ref.cosine(), 0.0);
  EXPECT_EQ(zero_ref.sqnr_db(), -kInf);

  const ErrorStats zero_approx = stats_of(one, zero);
  EXPECT_EQ(zero_approx.nmse(), 1.0);
  EXPECT_EQ(zero_approx.cosine(), 0.0);
  EXPECT_EQ(zero_approx.sqnr_db(), 0.0);

  EXPECT_EQ(stats_of(one, minus_one).cosine(), -1.0);
  EXPECT_EQ(stats_of(one, one).cosine(), 1.0);
  EXPECT_EQ(stats_of(one, one).sqnr_db(), kInf);
}

TEST(ErrorStats, LargeFiniteValuesDoNotOverflow) {
  const std::vector<float> x = {3e38f, -3e38f}, y = {-3e38f, 3e38f};
  const ErrorStats s = stats_of(x, y);
  EXPECT_DOUBLE_EQ(s.maxerr(), 2 * static_cast<double>(3e38f));
  EXPECT_DOUBLE_EQ(s.nmse(), 4.0);
  EXPECT_EQ(s.cosine(), -1.0);
}

TEST(ErrorStats, NanOrInfinityIsRejectedWithItsIndex) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(10, 1.0f), y(10, 1.0f);
  ErrorStats s;
  s.add(x.data(), y.data(), 10);
  x[7] = nan;
  expect_error([&] { s.add(x.data(), y.data(), 10); }, "reference[7] is nan");
  x[7] = 1.0f;
  y[3] = -inf;
  expect_error([&] { s.add(x.data(), y.data(), 10); }, "approx[3] is -inf");
  expect_error([&] { (void)rmse(x.data(), y.data(), 10); }, "approx[3]");
  // The failed calls left the accumulator as it was.
  EXPECT_EQ(s.count(), 10u);
  EXPECT_EQ(s.rmse(), 0.0);
}

TEST(ErrorStats, NoSamplesIsAnErrorForEveryMetric) {
  const ErrorStats empty;
  EXPECT_EQ(empty.count(), 0u);
  expect_error([&] { (void)empty.rmse(); }, "no samples");
  expect_error([&] { (void)empty.nmse(); }, "no samples");
  expect_error([&] { (void)empty.mae(); }, "no samples");
  expect_error([&] { (void)empty.maxerr(); }, "no samples");
  expect_error([&] { (void)empty.cosine(); }, "no samples");
  expect_error([&] { (void)empty.sqnr_db(); }, "no samples");
  expect_error([&] { (void)empty.quantile(0.5); }, "no samples");
  expect_error([&] { (void)empty.llama_line("x"); }, "no samples");
  expect_error([&] { (void)empty.summary(); }, "no samples");
  const float v = 1.0f;
  expect_error([&] { (void)mae(&v, &v, 0); }, "no samples");
}

TEST(ErrorStats, NullPointerWithElementsIsAnError) {
  const float v[2] = {1.0f, 2.0f};
  ErrorStats s;
  s.add(nullptr, nullptr, 0);  // nothing to read: allowed
  expect_error([&] { s.add(nullptr, v, 2); }, "null pointer");
  expect_error([&] { s.add(v, nullptr, 2); }, "null pointer");
  EXPECT_EQ(s.count(), 0u);
}

}  // namespace
}  // namespace fixq
