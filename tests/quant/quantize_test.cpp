// quantize / dequantize: an independent oracle, bit-identity of every instruction set with
// the scalar reference, exhaustive round trips, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/quant.h"
#include "support/expect.h"
#include "quant/kernels.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"

namespace fixq {
namespace {

using test::expect_error;

QuantScheme scheme(int bits, bool sgn, Granularity g, int axis = 0, int64_t group = 0,
                   Symmetry sym = Symmetry::Asymmetric, ScaleKind kind = ScaleKind::Multiplier) {
  return QuantScheme::make(bits, sgn, sym, kind, g, axis, group);
}

// Random parameters of the right shape (not derived from data, so that saturation and
// every zero point get exercised).
QuantParams random_params(const QuantScheme& s, const Shape& shape, std::mt19937& rng) {
  QuantParams p;
  p.scheme = s;
  p.shape = s.param_shape(shape);
  const size_t n = static_cast<size_t>(numel(p.shape));
  for (size_t i = 0; i < n; ++i) {
    const int e = static_cast<int>(rng() % 24) - 8;
    if (s.scale_kind == ScaleKind::PowerOfTwo) {
      p.exponent.push_back(e);
      p.scale.push_back(std::ldexp(1.0f, -e));
    } else {
      p.scale.push_back(std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, -e));
    }
    const int32_t span = s.format.qmax() - s.format.qmin() + 1;
    p.zero_point.push_back(s.format.qmin() + static_cast<int32_t>(rng() % static_cast<uint32_t>(span)));
  }
  p.validate();
  return p;
}

// Values that stress rounding and saturation: ties after division by a power of two,
// huge, tiny, signed zeros, infinities.
std::vector<float> nasty_values(size_t n, std::mt19937& rng) {
  std::vector<float> v(n);
  std::uniform_real_distribution<float> u(-300.0f, 300.0f);
  const float specials[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 1e30f, -1e30f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(), 127.5f, -128.5f, 32767.5f};
  for (size_t i = 0; i < n; ++i) {
    switch (rng() % 4) {
      case 0: v[i] = specials[rng() % (sizeof(specials) / sizeof(float))]; break;
      case 1: v[i] = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) + 0.5f, -static_cast<int>(rng() % 6)); break;
      default: v[i] = u(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 12) - 6);
    }
  }
  return v;
}

// Oracle for one element, written independently of fixq: std::nearbyint in the default
// rounding mode (ties to even), on the float quotient, then clamp.
int64_t oracle_quantize(float x, float scale, int32_t zp, IntFormat f) {
  if (std::isnan(x)) return zp;
  const float t = x / scale;
  const double r = std::nearbyint(static_cast<double>(t)) + zp;
  return static_cast<int64_t>(std::min<double>(std::max<double>(r, f.qmin()), f.qmax()));
}

// The slot of every element, computed from coordinates (independent of the run walker).
int64_t slot_of(const QuantScheme& s, const Shape& shape, int64_t flat) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = flat % shape[d];
    flat /= shape[d];
  }
  const int rank = static_cast<int>(shape.size());
  switch (s.granularity) {
    case Granularity::PerTensor: return 0;
    case Granularity::PerChannel: return c[normalize_axis(s.axis, rank)];
    case Granularity::PerToken: {
      int64_t r = 0;
      for (int d = 0; d + 1 < rank; ++d) r = r * shape[d] + c[d];
      return r;
    }
    case Granularity::PerGroup: {
      const int a = normalize_axis(s.axis, rank);
      int64_t r = 0;
      for (int d = 0; d < rank; ++d) r = r * (d == a ? shape[d] / s.group_size : shape[d]) + (d == a ? c[d] / s.group_size : c[d]);
      return r;
    }
  }
  return -1;
}

struct Case {
  Shape shape;
  QuantScheme scheme;
};

std::vector<Case> granularity_cases(int bits, bool sgn) {
  return {
      {{67}, scheme(bits, sgn, Granularity::PerTensor)},
      {{5, 33}, scheme(bits, sgn, Granularity::PerChannel, 0)},
      {{5, 33}, scheme(bits, sgn, Granularity::PerChannel, 1)},
      {{3, 7, 19}, scheme(bits, sgn, Granularity::PerChannel, 1)},
      {{4, 48}, scheme(bits, sgn, Granularity::PerGroup, 1, 16)},
      {{48, 5}, scheme(bits, sgn, Granularity::PerGroup, 0, 8)},
      {{2, 12, 3}, scheme(bits, sgn, Granularity::PerGroup, 1, 4)},
      {{6, 35}, scheme(bits, sgn, Granularity::PerToken)},
      {{2, 3, 17}, scheme(bits, sgn, Granularity::PerToken)},
  };
}

template <class Q>
void check_against_oracle_and_isas(int bits, bool sgn, std::mt19937& rng) {
  test::PathGuard guard;
  for (const Case& c : granularity_cases(bits, sgn)) {
    for (ScaleKind kind : {ScaleKind::Multiplier, ScaleKind::PowerOfTwo}) {
      QuantScheme s = c.scheme;
      s.scale_kind = kind;
      const QuantParams p = random_params(s, c.shape, rng);
      const int64_t n = numel(c.shape);
      const std::vector<float> x = nasty_values(static_cast<size_t>(n), rng);
      std::vector<Q> ref(n);
      test::use_path(test::scalar_path());
      quantize(x.data(), c.shape, p, ref.data());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = slot_of(s, c.shape, i);
        ASSERT_EQ(int64_t{ref[i]}, oracle_quantize(x[i], p.scale[k], p.zero_point[k], s.format))
            << "x=" << x[i] << " scale=" << p.scale[k] << " zp=" << p.zero_point[k] << " " << s.format.name();
      }
      std::vector<float> deq_ref(n);
      dequantize(ref.data(), c.shape, p, deq_ref.data());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = slot_of(s, c.shape, i);
        ASSERT_EQ(deq_ref[i], static_cast<float>(ref[i] - p.zero_point[k]) * p.scale[k]);
      }
      for (const test::KernelPath& path : test::kernel_paths()) {
        test::use_path(path);
        std::vector<Q> q(n);
        quantize(x.data(), c.shape, p, q.data());
        ASSERT_EQ(q, ref) << path.name() << " " << s.format.name() << " " << to_string(s.granularity);
        std::vector<float> deq(n);
        dequantize(q.data(), c.shape, p, deq.data());
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(deq[i]), std::bit_cast<uint32_t>(deq_ref[i])) << path.name();
      }
    }
  }
}

TEST(Quantize, MatchesOracleAndEveryIsaMatchesScalar) {
  std::mt19937 rng(13);
  for (int bits = 2; bits <= 8; ++bits) {
    check_against_oracle_and_isas<int8_t>(bits, true, rng);
    check_against_oracle_and_isas<uint8_t>(bits, false, rng);
    check_against_oracle_and_isas<int32_t>(bits, true, rng);
  }
  for (int bits = 9; bits <= 16; ++bits) {
    check_against_oracle_and_isas<int16_t>(bits, true, rng);
    check_against_oracle_and_isas<uint16_t>(bits, false, rng);
    check_against_oracle_and_isas<int32_t>(bits, false, rng);
  }
}

// Every length from 1 to 67 and a few large ones, so every vector tail is taken.
TEST(Quantize, RaggedLengthsBitIdentical) {
  test::PathGuard guard;
  std::mt19937 rng(14);
  for (int64_t n : [] {
         std::vector<int64_t> v;
         for (int64_t i = 1; i <= 67; ++i) v.push_back(i);
         for (int64_t i : {255, 256, 257, 4099, 100003}) v.push_back(i);
         return v;
       }()) {
    const Shape shape{n};
    for (const QuantScheme& s : {scheme(8, true, Granularity::PerTensor), scheme(16, false, Granularity::PerChannel, 0)}) {
      const QuantParams p = random_params(s, shape, rng);
      const std::vector<float> x = nasty_values(static_cast<size_t>(n), rng);
      std::vector<int32_t> ref(n), q(n);
      test::use_path(test::scalar_path());
      quantize(x.data(), shape, p, ref.data());
      for (const test::KernelPath& path : test::kernel_paths()) {
        test::use_path(path);
        quantize(x.data(), shape, p, q.data());
        ASSERT_EQ(q, ref) << "n=" << n << " " << path.name();
      }
    }
  }
}

// The checking quantize a model's input takes (quant_detail::QuantKernels::quantize_finite)
// and the plain check (first_non_finite): on every path, quantize's integers and the index
// of the first NaN or infinity, wherever in a ragged run it falls (first, last, a vector's
// tail lane, after an earlier NaN), or -1 for finite data (largest floats and denormals
// included). Independent oracle: std::isfinite over the run.
TEST(Quantize, FiniteCheckingKernelsFindTheFirstNanOrInfinity) {
  test::PathGuard guard;
  std::mt19937 rng(16);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 64, 100, 257}) {
    for (int64_t at : {int64_t{-1}, int64_t{0}, n / 2, n - 1}) {
      for (float bad : {inf, -inf, nan}) {
        std::vector<float> x(static_cast<size_t>(n));
        std::uniform_real_distribution<float> u(-3.0f, 3.0f);
        for (float& v : x) v = u(rng);
        x[0] = std::numeric_limits<float>::max();
        if (n > 1) x[1] = std::numeric_limits<float>::denorm_min();
        if (at >= 0) {
          x[static_cast<size_t>(at)] = bad;
          if (at + 3 < n) x[static_cast<size_t>(at + 3)] = nan;  // a later one is not reported
        }
        int64_t expect = -1;
        for (int64_t i = 0; i < n && expect < 0; ++i)
          if (!std::isfinite(x[static_cast<size_t>(i)])) expect = i;
        ASSERT_EQ(expect, at);
        std::vector<int8_t> ref(static_cast<size_t>(n)), q(static_cast<size_t>(n));
        test::use_path(test::scalar_path());
        quant_detail::active_kernels<int8_t>().quantize(x.data(), n, 0.05f, 3, -128, 127, ref.data());
        for (const test::KernelPath& path : test::kernel_paths()) {
          test::use_path(path);
          const std::string what = path.name() + " n=" + std::to_string(n) + " at=" + std::to_string(at);
          EXPECT_EQ(quant_detail::first_non_finite(x.data(), n), expect) << what;
          std::fill(q.begin(), q.end(), int8_t{0});
          EXPECT_EQ(quant_detail::active_kernels<int8_t>().quantize_finite(x.data(), n, 0.05f, 3, -128, 127, q.data()),
                    expect)
              << what;
          EXPECT_EQ(q, ref) << what;
          std::vector<int16_t> q16(static_cast<size_t>(n));
          EXPECT_EQ(quant_detail::active_kernels<int16_t>().quantize_finite(x.data(), n, 0.05f, 3, -32768, 32767,
                                                                             q16.data()),
                    expect)
              << what;
        }
      }
    }
  }
}

// quantize(dequantize(q)) == q for every q of every bit width and granularity.
template <class Q>
void round_trip_all_values(int bits, bool sgn, std::mt19937& rng) {
  test::PathGuard guard;
  const IntFormat f = IntFormat::make(bits, sgn);
  const int64_t count = int64_t{f.qmax()} - f.qmin() + 1;
  for (const Case& c0 : granularity_cases(bits, sgn)) {
    for (ScaleKind kind : {ScaleKind::Multiplier, ScaleKind::PowerOfTwo}) {
      QuantScheme s = c0.scheme;
      s.scale_kind = kind;
      // Enough repetitions of the base shape that small formats appear in every slot many
      // times; for 16-bit formats the per-tensor loop below covers every value.
      Shape shape = c0.shape;
      const int64_t base = numel(shape);
      shape[0] *= std::clamp<int64_t>((count + base - 1) / base, 1, 64);
      const int64_t n = numel(shape);
      const QuantParams p = random_params(s, shape, rng);
      std::vector<Q> q(n), back(n);
      for (int64_t i = 0; i < n; ++i) q[i] = static_cast<Q>(f.qmin() + (i * 7919 + i / count) % count);
      std::vector<float> x(n);
      for (const test::KernelPath& path : test::kernel_paths()) {
        test::use_path(path);
        dequantize(q.data(), shape, p, x.data());
        quantize(x.data(), shape, p, back.data());
        ASSERT_EQ(back, q) << f.name() << " " << to_string(s.granularity) << " " << to_string(kind) << " " << path.name();
      }
    }
  }
  // Per-tensor: literally every value under each of many random parameters.
  for (int trial = 0; trial < 20; ++trial) {
    const QuantScheme s = scheme(bits, sgn, Granularity::PerTensor, 0, 0, Symmetry::Asymmetric,
                                 trial % 2 ? ScaleKind::PowerOfTwo : ScaleKind::Multiplier);
    const Shape shape{count};
    const QuantParams p = random_params(s, shape, rng);
    std::vector<Q> q(count), back(count);
    for (int64_t i = 0; i < count; ++i) q[i] = static_cast<Q>(f.qmin() + i);
    std::vector<float> x(count);
    dequantize(q.data(), shape, p, x.data());
    quantize(x.data(), shape, p, back.data());
    ASSERT_EQ(back, q) << f.name();
  }
}

TEST(Quantize, RoundTripEveryValueEveryFormat) {
  std::mt19937 rng(15);
  for (int bits = 2; bits <= 8; ++bits) {
    round_trip_all_values<int8_t>(bits, true, rng);
    round_trip_all_values<uint8_t>(bits, false, rng);
  }
  for (int bits = 9; bits <= 16; ++bits) {
    round_trip_all_values<int16_t>(bits, true, rng);
    round_trip_all_values<uint16_t>(bits, false, rng);
  }
}

TEST(Quantize, NanIsAnErrorUnlessMapped) {
  test::PathGuard guard;
  const Shape shape{40};
  std::vector<float> x(40, 1.0f);
  x[37] = std::nanf("");
  std::mt19937 rng(16);
  const QuantParams p = random_params(scheme(8, false, Granularity::PerTensor), shape, rng);
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    std::vector<uint8_t> q(40);
    expect_error([&] { quantize(x.data(), shape, p, q.data()); }, "element 37 of the tensor to quantize is NaN");
    quantize(x.data(), shape, p, q.data(), NanPolicy::ToZeroPoint);
    EXPECT_EQ(q[37], p.zero_point[0]);
  }
}

TEST(Quantize, BadInputIsAClearError) {
  std::mt19937 rng(17);
  const Shape shape{4, 8};
  const QuantParams p16 = random_params(scheme(12, true, Granularity::PerChannel, 0), shape, rng);
  std::vector<float> x(32, 0.5f);
  std::vector<int8_t> q8(32);
  expect_error([&] { quantize(x.data(), shape, p16, q8.data()); }, "does not fit in a 8-bit signed array");
  std::vector<int16_t> q16(32);
  expect_error([&] { quantize(x.data(), Shape{8, 4}, p16, q16.data()); }, "do not fit a per_channel tensor");
  expect_error([&] { quantize<int16_t>(nullptr, shape, p16, q16.data()); }, "null data pointer");
  // Dequantizing a value outside the format: a 4-bit tensor holding 9.
  const QuantParams p4 = random_params(scheme(4, true, Granularity::PerTensor), shape, rng);
  std::vector<int8_t> bad(32, 0);
  bad[5] = 9;
  std::vector<float> out(32);
  expect_error([&] { dequantize(bad.data(), shape, p4, out.data()); }, "element 5 = 9 is outside the int4 range");
}

// The comparisons above ran each family's own kernels: natively where this CPU has them,
// through SIMDe for the AVX-512 families everywhere.
TEST(Quantize, EveryInstructionSetIsExercised) {
  using quant_detail::QuantTable;
  test::expect_complete(quant_detail::registry());
  test::expect_each_family_runs_its_own(quant_detail::registry(), [](const QuantTable& t) { return t.s8.quantize; }, "quantize");
  test::expect_each_family_runs_its_own(quant_detail::registry(), [](const QuantTable& t) { return t.u16.dequantize_pc; },
                                        "dequantize per channel");
}

}  // namespace
}  // namespace fixq
