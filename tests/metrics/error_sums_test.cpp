// The searches' ErrorSums (src/metrics/error_sums.h) against oracles: exact sums on
// hand-made vectors (every partial sum exact in double), long double recomputation on
// random data of ragged lengths, ErrorStats' zero-vector rules for the cosine, and
// non-finite input seen by finite().
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "metrics/error_sums.h"

namespace fixq {
namespace {

using metrics_detail::ErrorSums;

ErrorSums sums_of(const std::vector<float>& x, const std::vector<float>& y) {
  ErrorSums s;
  s.add(x.data(), y.data(), x.size());
  return s;
}

TEST(ErrorSums, HandComputedVectorsGiveExactSums) {
  // d = {-0.5, 0, 1, 0}: sum d^2 = 1.25, sum x^2 = 30, sum y^2 = 26.25, sum xy = 27.5.
  const ErrorSums s = sums_of({1, -2, 3, 4}, {1.5f, -2, 2, 4});
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.err2, 1.25);
  EXPECT_EQ(s.ref2, 30.0);
  EXPECT_EQ(s.app2, 26.25);
  EXPECT_EQ(s.dot, 27.5);
  EXPECT_EQ(s.mse(), 1.25 / 4);
  EXPECT_DOUBLE_EQ(s.cosine(), 27.5 / std::sqrt(30.0 * 26.25));
}

TEST(ErrorSums, RaggedRandomRunsMatchLongDoubleAndAddUp) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{63}, size_t{1000}, size_t{100003}}) {
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) x[i] = nd(rng), y[i] = x[i] + 0.01f * nd(rng);
    long double e = 0, r = 0, a = 0, d = 0;
    for (size_t i = 0; i < n; ++i) {
      const long double xi = x[i], yi = y[i];
      e += (xi - yi) * (xi - yi), r += xi * xi, a += yi * yi, d += xi * yi;
    }
    // Two adds of the halves equal one add of the whole within the same bound.
    ErrorSums s;
    s.add(x.data(), y.data(), n / 2);
    s.add(x.data() + n / 2, y.data() + n / 2, n - n / 2);
    const ErrorSums whole = sums_of(x, y);
    const double tol = 1e-15 * static_cast<double>(n) + 1e-15;
    for (const ErrorSums* t : {static_cast<const ErrorSums*>(&s), &whole}) {
      EXPECT_EQ(t->count, n);
      EXPECT_NEAR(t->err2, static_cast<double>(e), tol * static_cast<double>(e)) << n;
      EXPECT_NEAR(t->ref2, static_cast<double>(r), tol * static_cast<double>(r)) << n;
      EXPECT_NEAR(t->app2, static_cast<double>(a), tol * static_cast<double>(a)) << n;
      EXPECT_NEAR(t->dot, static_cast<double>(d), tol * static_cast<double>(r + a)) << n;
      EXPECT_TRUE(t->finite());
    }
    // The same inputs give the same bits: equal outputs score equal in a search.
    const ErrorSums again = sums_of(x, y);
    EXPECT_EQ(again.err2, whole.err2);
    EXPECT_EQ(again.dot, whole.dot);
  }
}

TEST(ErrorSums, CosineOfZeroVectorsFollowsErrorStats) {
  EXPECT_EQ(sums_of({0, 0, 0}, {0, 0, 0}).cosine(), 1.0);
  EXPECT_EQ(sums_of({0, 0, 0}, {1, 0, 0}).cosine(), 0.0);
  EXPECT_EQ(sums_of({1, 0, 0}, {0, 0, 0}).cosine(), 0.0);
  EXPECT_EQ(sums_of({1, 2, 3}, {-1, -2, -3}).cosine(), -1.0);
  EXPECT_EQ(ErrorSums{}.mse(), 0.0);
}

TEST(ErrorSums, NonFiniteInputIsSeen) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(sums_of({1, 2, inf}, {1, 2, 3}).finite());
  EXPECT_FALSE(sums_of({1, 2, 3}, {nan, 2, 3}).finite());
  std::vector<float> x(17, 1.0f), y(17, 1.0f);
  y[16] = -inf;  // in the tail past the whole vectors
  EXPECT_FALSE(sums_of(x, y).finite());
}

}  // namespace
}  // namespace fixq
