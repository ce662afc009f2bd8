// The Percentile observer against exact percentiles of sorted copies of the data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "calib/histogram.h"
#include "fixq/calib.h"

namespace fixq {
namespace {

// numpy's default ("linear") percentile of a sorted sample: rank q * (n - 1), interpolated.
double exact_percentile(const std::vector<float>& sorted, double p) {
  const long double r = static_cast<long double>(p) / 100 * static_cast<long double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(r);
  if (i + 1 >= sorted.size()) return sorted.back();
  return static_cast<double>(sorted[i] + (r - i) * (static_cast<long double>(sorted[i + 1]) - sorted[i]));
}

std::vector<float> sorted_copy(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<float> abs_sorted(const std::vector<float>& v) {
  std::vector<float> a(v.size());
  std::transform(v.begin(), v.end(), a.begin(), [](float x) { return std::fabs(x); });
  return sorted_copy(std::move(a));
}

// Observes `data` in batches of `batch` with one Percentile observer per p; returns, per
// p, the ranges for an asymmetric and a symmetric target, and the final bin width of the
// stream (mirrored on a private StreamingHistogram fed the observer's cover / add sequence).
struct Streamed {
  Range asym, sym;
  double bin_width;
};
std::vector<Streamed> stream(const std::vector<float>& data, size_t batch, const std::vector<double>& ps,
                             int bins) {
  std::vector<Observer> obs;
  for (double p : ps) {
    ObserverConfig cfg;
    cfg.method = CalibMethod::Percentile;
    cfg.percentile = p;
    cfg.bins = bins;
    obs.emplace_back(cfg);
  }
  calib_detail::StreamingHistogram mirror(bins);
  for (size_t off = 0; off < data.size(); off += batch) {
    const size_t len = std::min(batch, data.size() - off);
    for (Observer& o : obs) o.observe(data.data() + off, {static_cast<int64_t>(len)});
    const auto [lo, hi] = std::minmax_element(data.begin() + static_cast<ptrdiff_t>(off),
                                              data.begin() + static_cast<ptrdiff_t>(off + len));
    mirror.cover(*lo, *hi);
    for (size_t i = off; i < off + len; ++i) mirror.add(data[i]);
  }
  QuantScheme asym, sym;
  sym.symmetry = Symmetry::Symmetric;
  std::vector<Streamed> out;
  for (const Observer& o : obs) out.push_back({o.ranges(asym)[0], o.ranges(sym)[0], mirror.width()});
  return out;
}

std::vector<float> uniform_data(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<float> gaussian_data(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.5f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = g(rng);
  return v;
}

void check_distribution(const std::vector<float>& data, const char* name) {
  const std::vector<float> sorted = sorted_copy(data), abs = abs_sorted(data);
  const std::vector<double> ps = {99.99, 99.9, 99.0};
  const std::vector<Streamed> one = stream(data, data.size(), ps, 2048);
  const std::vector<Streamed> many = stream(data, 10000, ps, 2048);
  for (size_t k = 0; k < ps.size(); ++k) {
    const double p = ps[k];
    const double lo = exact_percentile(sorted, 100 - p), hi = exact_percentile(sorted, p);
    const double t = exact_percentile(abs, p);
    for (const Streamed& s : {one[k], many[k]}) {
      const double w = s.bin_width * (1 + 1e-9);
      EXPECT_NEAR(s.asym.min, lo, w) << name << " p " << p;
      EXPECT_NEAR(s.asym.max, hi, w) << name << " p " << p;
      // Symmetric: the p-th percentile of |x|, cut to [min, max].
      EXPECT_NEAR(std::max(-s.sym.min, s.sym.max), t, w) << name << " p " << p;
      EXPECT_GE(s.sym.min, sorted.front());
      EXPECT_LE(s.sym.max, sorted.back());
    }
    // Streaming in 100 batches agrees with one batch to within their two bin widths.
    EXPECT_NEAR(many[k].asym.min, one[k].asym.min, many[k].bin_width + one[k].bin_width) << name;
    EXPECT_NEAR(many[k].asym.max, one[k].asym.max, many[k].bin_width + one[k].bin_width) << name;
    // The growth rule keeps the data over more than bins / 2 - 1 bins; one batch uses all.
    EXPECT_LT(many[k].bin_width, one[k].bin_width * 2048 / (2048 / 2 - 1));
  }
}

TEST(PercentileObserver, UniformMillionSamples) { check_distribution(uniform_data(1000000, 1), "uniform"); }
TEST(PercentileObserver, GaussianMillionSamples) {
  check_distribution(gaussian_data(1000000, 2), "gaussian");
}

TEST(PercentileObserver, HundredIsExactlyMinMax) {
  const std::vector<float> data = gaussian_data(5000, 3);
  const Streamed s = stream(data, 700, {100.0}, 64)[0];
  const auto [lo, hi] = std::minmax_element(data.begin(), data.end());
  EXPECT_EQ(s.asym.min, *lo);
  EXPECT_EQ(s.asym.max, *hi);
  EXPECT_EQ(s.sym.min, *lo);
  EXPECT_EQ(s.sym.max, *hi);
}

TEST(PercentileObserver, NeverWiderThanObserved) {
  // Few samples and a coarse grid: the interpolation alone could step outside [min, max].
  const std::vector<float> data = {-3.0f, 1.0f, 1.5f, 2.0f, 10.0f};
  for (const Streamed& s : stream(data, 2, {99.99, 75.0, 50.5}, 64)) {
    EXPECT_GE(s.asym.min, -3.0f);
    EXPECT_LE(s.asym.max, 10.0f);
    EXPECT_LE(s.asym.min, s.asym.max);
    EXPECT_GE(s.sym.min, -3.0f);
    EXPECT_LE(s.sym.max, 10.0f);
  }
}

TEST(PercentileObserver, PerChannelMiddleAxis) {
  // Shape [outer, 3, inner], channel c scaled by (c + 1): each channel has its own tails.
  const int64_t outer = 50, channels = 3, inner = 400;
  const std::vector<float> base = gaussian_data(static_cast<size_t>(outer * channels * inner), 4);
  std::vector<float> x(base.size());
  std::vector<std::vector<float>> per(3);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const size_t f = static_cast<size_t>((o * channels + c) * inner + i);
        x[f] = base[f] * static_cast<float>(c + 1);
        per[static_cast<size_t>(c)].push_back(x[f]);
      }
  ObserverConfig cfg;
  cfg.method = CalibMethod::Percentile;
  cfg.percentile = 99.9;
  cfg.per_channel = true;
  cfg.axis = 1;
  Observer obs(cfg);
  obs.observe(x.data(), {outer, channels, inner});
  QuantScheme s;
  s.granularity = Granularity::PerChannel;
  s.axis = 1;
  const std::vector<Range> r = obs.ranges(s);
  ASSERT_EQ(r.size(), 3u);
  for (size_t c = 0; c < 3; ++c) {
    const std::vector<float> sorted = sorted_copy(per[c]);
    // One batch: the grid spans exactly [min, max] of the channel.
    const double w = (static_cast<double>(sorted.back()) - sorted.front()) / 2048 * (1 + 1e-9);
    EXPECT_NEAR(r[c].min, exact_percentile(sorted, 0.1), w) << "channel " << c;
    EXPECT_NEAR(r[c].max, exact_percentile(sorted, 99.9), w) << "channel " << c;
  }
}

}  // namespace
}  // namespace fixq
