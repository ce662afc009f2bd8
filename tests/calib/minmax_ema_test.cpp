// MinMax and Ema observers against direct computations over all observed data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "fixq/calib.h"
#include "fixq/error.h"

namespace fixq {
namespace {

// The channel of flat index f along axis a of shape: (f / product of the later extents)
// mod extent, written independently of the library's outer / extent / inner loops.
int64_t channel_of(int64_t f, const Shape& shape, int a) {
  int64_t later = 1;
  for (size_t i = static_cast<size_t>(a) + 1; i < shape.size(); ++i) later *= shape[i];
  return (f / later) % shape[static_cast<size_t>(a)];
}

QuantScheme per_channel_scheme(int axis) {
  QuantScheme s;
  s.granularity = Granularity::PerChannel;
  s.axis = axis;
  return s;
}

struct Batch {
  Shape shape;
  std::vector<float> data;
};

// A batch of the given rank whose extent along axis a is `channels` and whose other
// extents are random in [1, 4]; values mix scales and signs.
Batch random_batch(std::mt19937_64& rng, int rank, int a, int64_t channels) {
  Batch b;
  std::uniform_int_distribution<int64_t> extent(1, 4);
  for (int i = 0; i < rank; ++i) b.shape.push_back(i == a ? channels : extent(rng));
  int64_t n = 1;
  for (int64_t d : b.shape) n *= d;
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(-3.0f, 3.0f);
  for (int64_t i = 0; i < n; ++i) b.data.push_back(g(rng) * std::exp2(scale(rng)) + 0.5f);
  return b;
}

TEST(MinMaxObserver, EqualsMinmaxElementPerChannelOverBatches) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 1 + trial % 4;
    const int a = static_cast<int>(rng() % static_cast<uint64_t>(rank));
    const int axis = (trial % 2) ? a - rank : a;  // negative axes too
    const int64_t channels = 1 + static_cast<int64_t>(rng() % 5);
    ObserverConfig cfg;
    cfg.per_channel = true;
    cfg.axis = axis;
    Observer obs(cfg);
    std::vector<std::vector<float>> seen(static_cast<size_t>(channels));
    for (int batch = 0; batch < 4; ++batch) {
      const Batch b = random_batch(rng, rank, a, channels);
      obs.observe(b.data.data(), b.shape);
      for (size_t f = 0; f < b.data.size(); ++f)
        seen[static_cast<size_t>(channel_of(static_cast<int64_t>(f), b.shape, a))].push_back(b.data[f]);
    }
    ASSERT_EQ(obs.channels(), static_cast<size_t>(channels));
    const std::vector<Range> r = obs.ranges(per_channel_scheme(axis));
    ASSERT_EQ(r.size(), static_cast<size_t>(channels));
    for (size_t c = 0; c < r.size(); ++c) {
      const auto [lo, hi] = std::minmax_element(seen[c].begin(), seen[c].end());
      EXPECT_EQ(r[c].min, *lo) << "trial " << trial << " channel " << c;
      EXPECT_EQ(r[c].max, *hi) << "trial " << trial << " channel " << c;
    }
  }
}

TEST(MinMaxObserver, PerTensorAcceptsAnyShapes) {
  std::mt19937_64 rng(11);
  Observer obs(ObserverConfig{});
  std::vector<float> all;
  for (int batch = 0; batch < 6; ++batch) {
    const Batch b = random_batch(rng, 1 + batch % 3, 0, 1 + batch);
    obs.observe(b.data.data(), b.shape);
    all.insert(all.end(), b.data.begin(), b.data.end());
  }
  EXPECT_EQ(obs.channels(), 1u);
  const std::vector<Range> r = obs.ranges(QuantScheme{});
  ASSERT_EQ(r.size(), 1u);
  const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
  EXPECT_EQ(r[0].min, *lo);
  EXPECT_EQ(r[0].max, *hi);
}

// Channel c holds values in [100 c, 100 c + 1), so a wrong axis mapping cannot pass.
void check_axis_mapping(const Shape& shape, int axis) {
  const int rank = static_cast<int>(shape.size());
  const int a = axis < 0 ? axis + rank : axis;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t f = 0; f < n; ++f)
    x[static_cast<size_t>(f)] =
        100.0f * static_cast<float>(channel_of(f, shape, a)) + static_cast<float>(f) / static_cast<float>(n);
  ObserverConfig cfg;
  cfg.per_channel = true;
  cfg.axis = axis;
  Observer obs(cfg);
  obs.observe(x.data(), shape);
  const std::vector<Range> r = obs.ranges(per_channel_scheme(axis));
  ASSERT_EQ(r.size(), static_cast<size_t>(shape[static_cast<size_t>(a)]));
  for (size_t c = 0; c < r.size(); ++c) {
    EXPECT_GE(r[c].min, 100.0f * static_cast<float>(c)) << "axis " << axis;
    EXPECT_LT(r[c].max, 100.0f * static_cast<float>(c) + 1.0f) << "axis " << axis;
  }
}

TEST(MinMaxObserver, MiddleAndLastAxisOf3D) {
  check_axis_mapping({2, 3, 4}, 1);
  check_axis_mapping({2, 3, 4}, 2);
  check_axis_mapping({2, 3, 4}, -1);
  check_axis_mapping({2, 3, 4}, 0);
  check_axis_mapping({5, 1, 3}, 1);
}

// The Ema observer against the recurrence in long double: the first batch seeds, then
// m = d * m + (1 - d) * m_batch per observe() call.
void check_ema(double decay, int channels, int batches, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ObserverConfig cfg;
  cfg.method = CalibMethod::Ema;
  cfg.ema_decay = decay;
  cfg.per_channel = true;
  cfg.axis = -1;
  Observer obs(cfg);
  std::vector<long double> mn(static_cast<size_t>(channels)), mx(static_cast<size_t>(channels));
  const long double d = decay;
  for (int t = 0; t < batches; ++t) {
    const Batch b = random_batch(rng, 2, 1, channels);
    obs.observe(b.data.data(), b.shape);
    for (int c = 0; c < channels; ++c) {
      float bmin = b.data[static_cast<size_t>(c)], bmax = bmin;
      for (int64_t row = 0; row < b.shape[0]; ++row) {
        const float v = b.data[static_cast<size_t>(row * channels + c)];
        bmin = std::min(bmin, v);
        bmax = std::max(bmax, v);
      }
      const size_t k = static_cast<size_t>(c);
      mn[k] = t == 0 ? bmin : d * mn[k] + (1.0L - d) * bmin;
      mx[k] = t == 0 ? bmax : d * mx[k] + (1.0L - d) * bmax;
    }
    const std::vector<Range> r = obs.ranges(per_channel_scheme(-1));
    for (size_t k = 0; k < r.size(); ++k) {
      if (t == 0) {  // the first batch seeds the averages exactly
        EXPECT_EQ(r[k].min, static_cast<float>(mn[k]));
        EXPECT_EQ(r[k].max, static_cast<float>(mx[k]));
      }
      EXPECT_NEAR(r[k].min, static_cast<double>(mn[k]), 1e-6 * std::max(1.0L, std::fabs(mn[k])))
          << "decay " << decay << " step " << t << " channel " << k;
      EXPECT_NEAR(r[k].max, static_cast<double>(mx[k]), 1e-6 * std::max(1.0L, std::fabs(mx[k])))
          << "decay " << decay << " step " << t << " channel " << k;
    }
  }
}

TEST(EmaObserver, MatchesRecurrenceDefaultDecay) { check_ema(0.9, 3, 30, 1); }
TEST(EmaObserver, MatchesRecurrenceOtherDecays) {
  check_ema(0.5, 2, 20, 2);
  check_ema(0.99, 4, 40, 3);
  check_ema(0.1, 1, 10, 4);
}

TEST(EmaObserver, DefaultDecayIsTheSpecRule) {
  // docs/spec.md 3.4: min = 0.9 * min_old + 0.1 * min_cur, one update per time step.
  ObserverConfig cfg;
  cfg.method = CalibMethod::Ema;
  Observer obs(cfg);
  const float first[] = {-1.0f, 2.0f}, second[] = {-11.0f, 12.0f};
  obs.observe(first, {2});
  obs.observe(second, {2});
  const Range r = obs.ranges(QuantScheme{})[0];
  EXPECT_FLOAT_EQ(r.min, -2.0f);  // 0.9 * -1 + 0.1 * -11
  EXPECT_FLOAT_EQ(r.max, 3.0f);   // 0.9 * 2 + 0.1 * 12
}

TEST(Observer, ResetForgetsEverything) {
  ObserverConfig cfg;
  cfg.per_channel = true;
  Observer obs(cfg);
  const float a[] = {1, 2, 3, 4};
  obs.observe(a, {2, 2});
  obs.reset();
  EXPECT_EQ(obs.batches(), 0);
  EXPECT_EQ(obs.channels(), 0u);
  EXPECT_THROW(obs.ranges(per_channel_scheme(0)), Error);
  const float b[] = {-1, -2, -3};  // a new channel count is fine after reset
  obs.observe(b, {3, 1});
  const std::vector<Range> r = obs.ranges(per_channel_scheme(0));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].min, -3.0f);
  EXPECT_EQ(r[2].max, -3.0f);
}

TEST(Observer, CopiesAreIndependentAndMovedFromIsEmpty) {
  Observer a(ObserverConfig{});
  const float x[] = {1, 2};
  a.observe(x, {2});
  Observer b = a;
  const float y[] = {-5, 9};
  b.observe(y, {2});
  EXPECT_EQ(a.ranges(QuantScheme{})[0].max, 2.0f);
  EXPECT_EQ(b.ranges(QuantScheme{})[0].max, 9.0f);
  Observer c = std::move(b);
  EXPECT_EQ(c.batches(), 2);
  EXPECT_EQ(b.batches(), 0);  // NOLINT(bugprone-use-after-move): documented as empty
  EXPECT_THROW(b.ranges(QuantScheme{}), Error);
  b.observe(x, {2});
  EXPECT_EQ(b.ranges(QuantScheme{})[0].min, 1.0f);
}

}  // namespace
}  // namespace fixq
