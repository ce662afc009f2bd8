// The Mse observer against brute-force searches that quantize the raw data with
// quantize_value / dequantize_value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fixq/calib.h"

namespace fixq {
namespace {

// Mean of (x - dequantize(quantize(x)))^2 over the raw data.
double raw_mse(const std::vector<float>& x, float scale, int32_t zp, IntRange r) {
  long double acc = 0;
  for (float v : x) {
    const double d = static_cast<double>(v) - dequantize_value(quantize_value(v, scale, zp, r), scale, zp);
    acc += d * d;
  }
  return static_cast<double>(acc / static_cast<long double>(x.size()));
}

QuantParams one_slot(const QuantScheme& s, Range r) {
  return params_from_ranges(s, {1}, std::span<const Range>(&r, 1));
}

double raw_mse(const std::vector<float>& x, const QuantScheme& s, Range r) {
  const QuantParams p = one_slot(s, r);
  return raw_mse(x, p.scale[0], p.zero_point[0], s.format.range());
}

Range observed(const std::vector<float>& x, const QuantScheme& s, CalibMethod method, size_t batch = 500) {
  ObserverConfig cfg;
  cfg.method = method;
  Observer obs(cfg);
  for (size_t off = 0; off < x.size(); off += batch)
    obs.observe(x.data() + off, {static_cast<int64_t>(std::min(batch, x.size() - off))});
  return obs.ranges(s)[0];
}

std::vector<float> gaussian(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.3f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = g(rng);
  return v;
}

// Laplace(0, 1), with `outliers` values of magnitude about `big` replacing samples.
std::vector<float> laplace(size_t n, uint64_t seed, int outliers = 0, float big = 0.0f) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = (rng() & 1) ? e(rng) : -e(rng);
  for (int i = 0; i < outliers; ++i)
    v[(static_cast<size_t>(i) * 997 + 5) % n] =
        (i % 2 ? 1.0f : -1.0f) * big * (1.0f + 0.25f * static_cast<float>(i));
  return v;
}

// Skewed, mostly positive (post-activation like): Exp(1) - 0.3 plus a little noise.
std::vector<float> skewed(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::normal_distribution<float> g(0.0f, 0.1f);
  std::vector<float> v(n);
  for (float& x : v) x = e(rng) - 0.3f + g(rng);
  return v;
}

struct Dataset {
  std::string name;
  std::vector<float> x;
};

// The least raw MSE over clipping ranges, independent of the library's candidates: a
// coarse geometric grid of fractions (1 down to 2^-11 symmetric, 2^-9 asymmetric), then a
// 16x finer grid over the two coarse steps around the coarse optimum.
//   symmetric:  [-t, t], t = f * max |x|, 120 + 120 values of f;
//   asymmetric: [f_lo * min, f_hi * max], 32 x 32 + 32 x 32 pairs.
double brute_force_float(const std::vector<float>& x, const QuantScheme& s) {
  const auto [lo_it, hi_it] = std::minmax_element(x.begin(), x.end());
  const double a = std::min(*lo_it, 0.0f), b = std::max(*hi_it, 0.0f);
  auto err = [&](double f_lo, double f_hi) {
    const Range r =
        s.symmetry == Symmetry::Symmetric
            ? Range{static_cast<float>(-std::max(-a, b) * f_lo), static_cast<float>(std::max(-a, b) * f_lo)}
            : Range{static_cast<float>(a * f_lo), static_cast<float>(b * f_hi)};
    return r.min < r.max ? raw_mse(x, s, r) : INFINITY;
  };
  const bool sym = s.symmetry == Symmetry::Symmetric;
  const int n = sym ? 120 : 32;
  const double step = (sym ? 11.0 : 9.0) / (n - 1);  // in octaves
  double best = INFINITY;
  int best_i = 0, best_j = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < (sym ? 1 : n); ++j) {
      const double e = err(std::exp2(-step * i), std::exp2(-step * j));
      if (e < best) {
        best = e;
        best_i = i;
        best_j = j;
      }
    }
  const int fine = sym ? 120 : 32;
  for (int i = 0; i < fine; ++i)
    for (int j = 0; j < (sym ? 1 : fine); ++j) {
      const double fi = std::min(std::exp2(-step * (best_i - 1 + 2.0 * i / (fine - 1))), 1.0);
      const double fj = std::min(std::exp2(-step * (best_j - 1 + 2.0 * j / (fine - 1))), 1.0);
      best = std::min(best, err(fi, fj));
    }
  return best;
}

// The achieved raw MSE of the observer's range is within 3% of the brute-force optimum.
// The brute force sees the individual samples, whose mean rounding error fluctuates by
// ~0.9 / sqrt(N) around the expectation the observer estimates; N keeps that below 1%
// where rounding dominates (8 bits) and the oracle is cheap (symmetric, 1-D).
void check_against_brute_force(const std::vector<QuantScheme>& schemes, size_t n) {
  const std::vector<Dataset> data = {
      {"gaussian", gaussian(n, 1)}, {"laplace", laplace(n, 2)}, {"skewed", skewed(n, 3)}};
  for (const Dataset& d : data)
    for (const QuantScheme& s : schemes) {
      const double mine = raw_mse(d.x, s, observed(d.x, s, CalibMethod::Mse));
      const double oracle = brute_force_float(d.x, s);
      EXPECT_LE(mine, 1.03 * oracle) << d.name << " " << s.format.name() << " " << to_string(s.symmetry);
    }
}

TEST(MseObserver, FloatSymmetricCloseToBruteForceOnRawData) {
  check_against_brute_force({QuantScheme::make(8, true, Symmetry::Symmetric), QuantScheme::make(4, true, Symmetry::Symmetric)},
                            10000);
}

TEST(MseObserver, FloatAsymmetricCloseToBruteForceOnRawData) {
  check_against_brute_force({QuantScheme::make(8, false, Symmetry::Asymmetric), QuantScheme::make(4, true, Symmetry::Asymmetric)},
                            2000);
}

TEST(MseObserver, HeavyTailsBeatMinMax) {
  // Two outliers (-60, +75) among 20000 Laplace(0, 1) samples. Clipping an outlier X to t
  // costs (X - t)^2 / N of MSE and refines the step for every other value: a large net
  // gain at 4 bits, a smaller one at 6 bits, and a loss at 8 bits, where the step is fine
  // already and Mse must then simply not lose to MinMax.
  const std::vector<float> x = laplace(20000, 4, 2, 60.0f);
  for (ScaleKind kind : {ScaleKind::Multiplier, ScaleKind::PowerOfTwo})
    for (Symmetry sym : {Symmetry::Symmetric, Symmetry::Asymmetric})
      for (int bits : {4, 6, 8}) {
        const QuantScheme s = QuantScheme::make(bits, true, sym, kind);
        const double mse = raw_mse(x, s, observed(x, s, CalibMethod::Mse, 4000));
        const double minmax = raw_mse(x, s, observed(x, s, CalibMethod::MinMax, 4000));
        const std::string what = s.format.name() + " " + to_string(sym) + " " + to_string(kind);
        if (bits == 4) {
          EXPECT_LT(mse, 0.5 * minmax) << what;
        } else if (bits == 6) {
          EXPECT_LT(mse, 0.9 * minmax) << what;
        } else {
          EXPECT_LE(mse, minmax * (1 + 1e-9)) << what;
        }
      }
}

// Exhaustive search on raw data over exponents e0 .. e0 + 12 (e0: the MinMax exponent)
// and, for asymmetric schemes, every zero point. Returns the best exponent (ties: coarser).
int brute_force_exponent(const std::vector<float>& x, const QuantScheme& s) {
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  const int e0 = one_slot(s, {*lo, *hi}).exponent[0];
  int best_e = e0;
  double best = INFINITY;
  for (int e = e0; e <= e0 + 12; ++e) {
    const float scale = std::ldexp(1.0f, -e);
    double err = INFINITY;
    if (s.symmetry == Symmetry::Symmetric) {
      err = raw_mse(x, scale, s.symmetric_zero_point(), s.format.range());
    } else {
      for (int32_t zp = s.format.qmin(); zp <= s.format.qmax(); ++zp)
        err = std::min(err, raw_mse(x, scale, zp, s.format.range()));
    }
    if (err < best) {
      best = err;
      best_e = e;
    }
  }
  return best_e;
}

TEST(MseObserver, PowerOfTwoExponentEqualsExhaustiveSearch) {
  const std::vector<Dataset> data = {{"gaussian", gaussian(1500, 5)},
                                     {"laplace+outliers", laplace(1500, 6, 3, 30.0f)},
                                     {"skewed", skewed(1500, 7)}};
  const std::vector<QuantScheme> schemes = {QuantScheme::make(8, true, Symmetry::Symmetric, ScaleKind::PowerOfTwo),
                                            QuantScheme::make(4, false, Symmetry::Symmetric, ScaleKind::PowerOfTwo),
                                            QuantScheme::make(6, true, Symmetry::Asymmetric, ScaleKind::PowerOfTwo),
                                            QuantScheme::make(4, false, Symmetry::Asymmetric, ScaleKind::PowerOfTwo)};
  for (const Dataset& d : data)
    for (const QuantScheme& s : schemes) {
      const std::string what = d.name + " " + s.format.name() + " " + to_string(s.symmetry);
      const Range r = observed(d.x, s, CalibMethod::Mse);
      const QuantParams p = one_slot(s, r);
      EXPECT_EQ(p.exponent[0], brute_force_exponent(d.x, s)) << what;
      // The range is exactly what (exponent, zero point) represents, so params_from_ranges
      // reproduced the observer's own choice rather than picking a neighbour.
      const float step = std::ldexp(1.0f, -p.exponent[0]);
      EXPECT_EQ(r.min, static_cast<float>(s.format.qmin() - p.zero_point[0]) * step) << what;
      EXPECT_EQ(r.max, static_cast<float>(s.format.qmax() - p.zero_point[0]) * step) << what;
    }
}

TEST(MseObserver, PowerOfTwoInt8AsymmetricEqualsExhaustiveSearch) {
  const std::vector<float> x = skewed(1000, 8);
  const QuantScheme s = QuantScheme::make(8, true, Symmetry::Asymmetric, ScaleKind::PowerOfTwo);
  const Range r = observed(x, s, CalibMethod::Mse);
  EXPECT_EQ(one_slot(s, r).exponent[0], brute_force_exponent(x, s));
}

TEST(MseObserver, StreamedAgreesWithOneBatch) {
  const std::vector<float> x = laplace(20000, 9);
  for (Symmetry sym : {Symmetry::Symmetric, Symmetry::Asymmetric}) {
    const QuantScheme s = QuantScheme::make(4, true, sym);
    const double one = raw_mse(x, s, observed(x, s, CalibMethod::Mse, x.size()));
    const double many = raw_mse(x, s, observed(x, s, CalibMethod::Mse, 250));
    EXPECT_NEAR(many, one, 0.02 * one) << to_string(sym);
  }
}

TEST(MseObserver, PerChannelMiddleAxisScalesByPowersOfTwo) {
  // Shape [20, 4, 50]; channel c holds the same values times 2^c. Every step of the
  // calibration commutes with an exact power-of-two scaling, so the ranges must too.
  const int64_t outer = 20, channels = 4, inner = 50;
  const std::vector<float> base = skewed(static_cast<size_t>(outer * inner), 10);
  std::vector<float> x(static_cast<size_t>(outer * channels * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i)
        x[static_cast<size_t>((o * channels + c) * inner + i)] =
            std::ldexp(base[static_cast<size_t>(o * inner + i)], static_cast<int>(c));
  for (const QuantScheme& target :
       {QuantScheme::make(8, true, Symmetry::Asymmetric), QuantScheme::make(4, true, Symmetry::Symmetric, ScaleKind::PowerOfTwo)}) {
    QuantScheme s = target;
    s.granularity = Granularity::PerChannel;
    s.axis = 1;
    ObserverConfig cfg;
    cfg.method = CalibMethod::Mse;
    cfg.per_channel = true;
    cfg.axis = -2;
    Observer obs(cfg);
    obs.observe(x.data(), {outer / 2, channels, inner});
    obs.observe(x.data() + x.size() / 2, {outer / 2, channels, inner});
    const std::vector<Range> r = obs.ranges(s);
    ASSERT_EQ(r.size(), static_cast<size_t>(channels));
    for (size_t c = 1; c < r.size(); ++c) {
      EXPECT_EQ(r[c].min, std::ldexp(r[0].min, static_cast<int>(c))) << "channel " << c;
      EXPECT_EQ(r[c].max, std::ldexp(r[0].max, static_cast<int>(c))) << "channel " << c;
    }
    EXPECT_NO_THROW(params_from_ranges(s, {outer, channels, inner}, r));
  }
}

TEST(MseObserver, ConstantChannelKeepsItsValue) {
  ObserverConfig cfg;
  cfg.method = CalibMethod::Mse;
  cfg.per_channel = true;
  cfg.axis = 1;
  Observer obs(cfg);
  const float x[] = {2.5f, -1.0f, 2.5f, 3.0f, 2.5f, 0.0f};  // [3, 2]: channel 0 is constant
  obs.observe(x, {3, 2});
  QuantScheme s;
  s.granularity = Granularity::PerChannel;
  s.axis = 1;
  const std::vector<Range> r = obs.ranges(s);
  EXPECT_EQ(r[0].min, 2.5f);
  EXPECT_EQ(r[0].max, 2.5f);
  EXPECT_LT(r[1].min, r[1].max);
}

}  // namespace
}  // namespace fixq
