// The streamed histogram and its piecewise-uniform reading (private calib headers).
#include "calib/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "calib/binned_mass.h"

namespace fixq::calib_detail {
namespace {

void observe(StreamingHistogram& h, const std::vector<float>& batch) {
  const auto [lo, hi] = std::minmax_element(batch.begin(), batch.end());
  h.cover(*lo, *hi);
  for (float v : batch) h.add(v);
}

// Bins every value directly on the final grid. Values within 1e-9 bins of an edge may
// legitimately sit on either side (edge arithmetic rounds); they are counted apart.
struct DirectBinning {
  std::vector<uint64_t> counts;
  uint64_t ambiguous = 0;
};
DirectBinning bin_directly(const StreamingHistogram& h, const std::vector<float>& all) {
  const size_t n = h.counts().size();
  DirectBinning d{std::vector<uint64_t>(n, 0), 0};
  for (float v : all) {
    const double q = (static_cast<double>(v) - h.lo()) / h.width();
    EXPECT_GT(q, -1e-9);
    EXPECT_LT(q, static_cast<double>(n) + 1e-9);
    if (std::fabs(q - std::round(q)) < 1e-9) ++d.ambiguous;
    const double i = std::clamp(std::floor(q), 0.0, static_cast<double>(n - 1));
    ++d.counts[static_cast<size_t>(i)];
  }
  return d;
}

void expect_same_as_direct(const StreamingHistogram& h, const std::vector<float>& all) {
  const DirectBinning d = bin_directly(h, all);
  uint64_t diff = 0;
  for (size_t i = 0; i < d.counts.size(); ++i)
    diff += d.counts[i] > h.counts()[i] ? d.counts[i] - h.counts()[i] : h.counts()[i] - d.counts[i];
  EXPECT_LE(diff, 2 * d.ambiguous);
  EXPECT_EQ(h.total(), all.size());
  EXPECT_EQ(std::accumulate(h.counts().begin(), h.counts().end(), uint64_t{0}), all.size());
}

TEST(StreamingHistogram, GrowthMergesCountsExactly) {
  std::mt19937_64 rng(3);
  StreamingHistogram h(256);
  std::vector<float> all;
  // Batches whose spread and centre keep changing, so the grid grows and shifts often.
  for (int b = 0; b < 40; ++b) {
    std::normal_distribution<float> g(static_cast<float>(b % 7) - 3.0f, 0.05f * static_cast<float>(1 + b));
    std::vector<float> batch(500);
    for (float& v : batch) v = g(rng);
    observe(h, batch);
    all.insert(all.end(), batch.begin(), batch.end());
    expect_same_as_direct(h, all);
  }
}

TEST(StreamingHistogram, DataKeepsMoreThanHalfTheBins) {
  // Data creeping outward on alternating sides: a grid that only ever doubles would lose
  // half its resolution at every step.
  StreamingHistogram h(128);
  std::vector<float> all = {0.0f, 1.0f};
  observe(h, all);
  for (int step = 1; step <= 60; ++step) {
    const float v = step % 2 ? 1.0f + 0.03f * static_cast<float>(step) : -0.03f * static_cast<float>(step);
    observe(h, {v});
    all.push_back(v);
    const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
    EXPECT_GT((*hi - *lo) / h.width(), 128 / 2 - 1) << "step " << step;
  }
  expect_same_as_direct(h, all);
}

TEST(StreamingHistogram, ShiftsWithoutCoarseningWhileDataFits) {
  StreamingHistogram h(64);
  observe(h, {0.0f, 1.0f});
  observe(h, {1.6f});  // needs a wider grid
  const double w = h.width();
  EXPECT_EQ(w, 2.0 / 64);
  observe(h, {-0.3f});  // [-0.3, 1.6] still fits 64 bins of width w: a pure shift
  EXPECT_EQ(h.width(), w);
  EXPECT_LE(h.lo(), -0.3);
  expect_same_as_direct(h, {0.0f, 1.0f, 1.6f, -0.3f});
}

TEST(StreamingHistogram, ConstantFirstBatchThenWideData) {
  StreamingHistogram h(64);
  observe(h, std::vector<float>(10, 3.0f));
  EXPECT_GT(h.width(), 0.0);
  std::vector<float> all(10, 3.0f);
  const std::vector<float> wide = {-100.0f, 0.0f, 50.0f, 3.0f};
  observe(h, wide);
  all.insert(all.end(), wide.begin(), wide.end());
  expect_same_as_direct(h, all);
  observe(h, std::vector<float>(5, 0.0f));  // an all-zero batch inside the span
  EXPECT_EQ(h.total(), all.size() + 5);
}

TEST(BinnedMass, CutsOuterBinsAndInvertsItsCdf) {
  StreamingHistogram h(64);
  std::vector<float> all;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-2.0f, 7.0f);
  for (int b = 0; b < 3; ++b) {
    std::vector<float> batch(1000);
    for (float& v : batch) v = u(rng) * static_cast<float>(b + 1);
    observe(h, batch);
    all.insert(all.end(), batch.begin(), batch.end());
  }
  const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
  const BinnedMass m(h, *lo, *hi);
  EXPECT_EQ(m.total(), static_cast<double>(all.size()));
  ASSERT_FALSE(m.bins().empty());
  EXPECT_EQ(m.bins().front().lo, *lo);  // cut to the observed extremes
  EXPECT_EQ(m.bins().back().hi, *hi);
  for (size_t i = 1; i < m.bins().size(); ++i) EXPECT_LE(m.bins()[i - 1].hi, m.bins()[i].lo);
  EXPECT_EQ(m.mass_at_or_below(*lo - 1.0), 0.0);
  EXPECT_EQ(m.mass_at_or_below(*hi), m.total());
  for (double q : {0.5, 1.0, 17.25, 1500.0, 2999.5, 3000.0}) {
    const double x = m.value_at_mass(q);
    EXPECT_NEAR(m.mass_at_or_below(x), q, 1e-9 * m.total()) << "mass " << q;
  }
}

}  // namespace
}  // namespace fixq::calib_detail
