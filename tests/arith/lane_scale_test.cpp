// The lane forms of fixed-point scales (arith/lane_scale.h): each scalar definition equals
// FixedPointScale::apply wherever lane_form / wide_product_form accept it, at the extremes
// (|x| up to 2^31, products near 2^38, shifts up to 62), and every family's vector version
// (AVX2, AVX-512 natively and through SIMDe) equals the scalar definition lane for lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "arith/lane_scale.h"
#include "fixq/cpu.h"
#include "lane_checks.h"

namespace fixq {
namespace {

using lane_checks::Form;

// Values of an interval that exercise its edges: the ends, their neighbours, 0, powers of
// two near the ends, and random ones.
std::vector<int64_t> probes(int64_t lo, int64_t hi, std::mt19937_64& rng, int random = 200) {
  std::vector<int64_t> v{lo, hi, 0, 1, -1};
  for (int64_t d : {1, 2, 3}) {
    v.push_back(lo + d);
    v.push_back(hi - d);
  }
  for (int k = 0; k < 40; ++k)
    for (int64_t p : {int64_t{1} << k, -(int64_t{1} << k)})
      for (int64_t e : {p - 1, p, p + 1}) v.push_back(e);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  for (int i = 0; i < random; ++i) v.push_back(d(rng));
  std::vector<int64_t> in;
  for (int64_t x : v)
    if (x >= lo && x <= hi) in.push_back(x);
  return in;
}

constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

// The largest x <= 2^31 - 1 with s.apply(x) inside int32 (apply is monotone).
int64_t in_range(const FixedPointScale& s) {
  int64_t lo = 0, hi = kI32Max;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (s.apply(mid) <= kI32Max && s.apply(-mid) >= kI32Min) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

TEST(LaneScale, PowerOfTwoFormsEqualApply) {
  std::mt19937_64 rng(1);
  int checked = 0;
  for (int n = -30; n <= 70; ++n) {
    const FixedPointScale s = FixedPointScale::pow2(n);
    // The whole int32 range, and a narrow interval that allows add-then-shift.
    const int64_t limit = n < 0 ? (kI32Max >> -n) : kI32Max;
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{-limit - (n < 0 ? 0 : 1), limit},
                          {-std::min<int64_t>(limit, 1000), std::min<int64_t>(limit, 1000)}}) {
      const auto l = lane_form(s, lo, hi, true);
      ASSERT_TRUE(l.has_value()) << "shift " << n << " on [" << lo << ", " << hi << "]";
      for (int64_t x : probes(lo, hi, rng)) {
        ASSERT_EQ(lane_apply_pow2(static_cast<int32_t>(x), *l), s.apply(x))
            << "shift " << n << " x " << x << " add_then_shift " << l->add_then_shift;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 10000);
  // A left shift that would leave int32 has no lane form.
  EXPECT_FALSE(lane_form(FixedPointScale::pow2(-2), kI32Min, kI32Max, true).has_value());
}

TEST(LaneScale, MultiplierFormsEqualApply) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> e(-40, 20);
  for (int t = 0; t < 400; ++t) {
    const FixedPointScale s = FixedPointScale::from_real(std::exp2(e(rng)));
    const int64_t lim = in_range(s);
    const auto l = lane_form(s, -lim, lim, false);
    ASSERT_TRUE(l.has_value()) << s.m << " " << s.shift << " " << lim;
    EXPECT_FALSE(lim < kI32Max && lane_form(s, -lim, lim + 1, false).has_value());  // one more leaves int32
    for (int64_t x : probes(-lim, lim, rng, 50))
      ASSERT_EQ(lane_apply_multiplier(static_cast<int32_t>(x), *l), s.apply(x)) << "m " << s.m << " shift " << s.shift << " x " << x;
  }
  // Shifts of 62 and beyond (the term is 0 from 63 on).
  for (int shift : {61, 62, 63, 64, 70}) {
    const FixedPointScale s{(1 << 30) + 12345, shift};
    const auto l = lane_form(s, kI32Min, kI32Max, false);
    ASSERT_TRUE(l.has_value());
    for (int64_t x : {kI32Min, kI32Max, int64_t{-1}, int64_t{1}, int64_t{0}})
      ASSERT_EQ(lane_apply_multiplier(static_cast<int32_t>(x), *l), s.apply(x)) << "shift " << shift << " x " << x;
  }
}

TEST(LaneScale, WideProductFormsEqualApply) {
  std::mt19937_64 rng(3);
  // Products near 2^38 in magnitude: |a|, |b| up to 2^19 - 1. Outputs fit int32 from a
  // right shift of 7 on.
  const int64_t ab = (int64_t{1} << 19) - 1;
  int checked = 0;
  for (int shift = -20; shift <= 62; ++shift) {
    const FixedPointScale pow2 = FixedPointScale::pow2(shift);
    const auto l = wide_product_form(pow2, -ab * ab, ab * ab, true);
    if (shift < 7) {
      EXPECT_FALSE(l.has_value()) << shift;  // (2^19 - 1)^2 / 2^6 leaves int32
      continue;
    }
    ASSERT_TRUE(l.has_value()) << shift;
    for (int64_t a : probes(-ab, ab, rng, 30))
      for (int64_t b : {-ab, ab - 1, int64_t{-3}, int64_t{1}, int64_t{77777}}) {
        ASSERT_EQ(lane_apply_wide_pow2(static_cast<int32_t>(a), static_cast<int32_t>(b), *l), pow2.apply(a * b))
            << "shift " << shift << " " << a << " * " << b;
        ++checked;
      }
  }
  std::uniform_int_distribution<int32_t> m(1 << 30, INT32_MAX);
  for (int shift = 9; shift <= 62; ++shift) {
    const FixedPointScale s{m(rng), shift};
    const auto l = wide_product_form(s, -ab * ab, ab * ab, false);
    if (shift < 38) {
      EXPECT_FALSE(l.has_value()) << shift;  // 2^38 * 2^31 / 2^37 leaves int32
      continue;
    }
    ASSERT_TRUE(l.has_value()) << shift;
    for (int64_t a : probes(-ab, ab, rng, 30))
      for (int64_t b : {-ab, ab - 1, int64_t{-3}, int64_t{1}, int64_t{77777}}) {
        ASSERT_EQ(lane_apply_wide_multiplier(static_cast<int32_t>(a), static_cast<int32_t>(b), *l), s.apply(a * b))
            << "m " << s.m << " shift " << shift << " " << a << " * " << b;
        ++checked;
      }
  }
  EXPECT_GT(checked, 5000);
  // Small products at small shifts: the identity's lower limit, 9.
  for (int shift = 9; shift < 38; ++shift) {
    const FixedPointScale s{m(rng), shift};
    const int64_t p = (int64_t{1} << (shift - 1)) - 1;  // |p m / 2^shift| < 2^30
    const auto l = wide_product_form(s, -p, p, false);
    ASSERT_TRUE(l.has_value()) << shift;
    for (int64_t a : probes(-(int64_t{1} << 15), int64_t{1} << 15, rng, 30))
      for (int64_t b : {int64_t{1}, int64_t{-2}, int64_t{3}}) {
        if (std::abs(a * b) > p) continue;
        ASSERT_EQ(lane_apply_wide_multiplier(static_cast<int32_t>(a), static_cast<int32_t>(b), *l), s.apply(a * b))
            << "shift " << shift << " " << a << " * " << b;
      }
  }
  // Outside the identity's domain there is no form: |p| >= 2^38, or a shift below 9.
  EXPECT_FALSE(wide_product_form(FixedPointScale{1 << 30, 40}, 0, int64_t{1} << 38, false).has_value());
  EXPECT_FALSE(wide_product_form(FixedPointScale{1 << 30, 8}, 0, 1000, false).has_value());
}

// Every family's vectors against the scalar definitions.
struct VectorPath {
  std::string name;
  lane_checks::Apply apply;
};

std::vector<VectorPath> vector_paths() {
  std::vector<VectorPath> v;
#if defined(__x86_64__)  // the lane files of other architectures' builds have no vector checks yet
  if (cpu_supports(Isa::Avx2)) v.push_back({"avx2", lane_checks::avx2::apply});
  if (cpu_supports(Isa::Avx512)) v.push_back({"avx512", lane_checks::avx512::apply});
  v.push_back({"avx512_simde", lane_checks::avx512_emulated::apply});
#endif
  return v;
}

void expect_vectors_match(Form form, const LaneScale& l, const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                          const std::string& what) {
  std::vector<int32_t> want(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    switch (form) {
      case Form::Pow2: want[i] = lane_apply_pow2(a[i], l); break;
      case Form::Multiplier: want[i] = lane_apply_multiplier(a[i], l); break;
      case Form::WidePow2: want[i] = lane_apply_wide_pow2(a[i], b[i], l); break;
      case Form::WideMultiplier: want[i] = lane_apply_wide_multiplier(a[i], b[i], l); break;
    }
  }
  for (const VectorPath& p : vector_paths()) {
    std::vector<int32_t> got(a.size());
    p.apply(form, l, a.data(), b.data(), static_cast<int64_t>(a.size()), got.data());
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << p.name << " " << what << " lane " << i << ": a " << a[i] << " b " << b[i];
  }
}

// n inputs (a multiple of 16) drawn from probes of [lo, hi].
std::vector<int32_t> lanes_of(int64_t lo, int64_t hi, std::mt19937_64& rng) {
  std::vector<int32_t> v;
  for (int64_t x : probes(lo, hi, rng, 100)) v.push_back(static_cast<int32_t>(x));
  while (v.size() % 16 != 0) v.push_back(0);
  return v;
}

TEST(LaneScale, VectorFamiliesEqualTheScalarDefinition) {
  std::mt19937_64 rng(4);
  for (int n = -30; n <= 40; ++n) {
    const FixedPointScale s = FixedPointScale::pow2(n);
    const int64_t limit = n < 0 ? (kI32Max >> -n) : kI32Max;
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{-limit, limit},
                          {-std::min<int64_t>(limit, 1000), std::min<int64_t>(limit, 1000)}}) {
      const std::optional<LaneScale> form = lane_form(s, lo, hi, true);
      ASSERT_TRUE(form.has_value()) << n;
      const LaneScale l = *form;
      const std::vector<int32_t> a = lanes_of(lo, hi, rng);
      expect_vectors_match(Form::Pow2, l, a, a, "pow2 shift " + std::to_string(n));
    }
  }
  std::uniform_real_distribution<double> e(-40, 20);
  for (int t = 0; t < 60; ++t) {
    const FixedPointScale s = FixedPointScale::from_real(std::exp2(e(rng)));
    const int64_t lim = in_range(s);
    const std::vector<int32_t> a = lanes_of(-lim, lim, rng);
    expect_vectors_match(Form::Multiplier, *lane_form(s, -lim, lim, false), a, a,
                         "multiplier shift " + std::to_string(s.shift));
  }
  const int64_t ab = (int64_t{1} << 19) - 1;
  std::uniform_int_distribution<int32_t> m(1 << 30, INT32_MAX);
  for (int shift = 7; shift <= 62; ++shift) {
    const std::vector<int32_t> a = lanes_of(-ab, ab, rng), b = lanes_of(-ab, ab, rng);
    expect_vectors_match(Form::WidePow2, *wide_product_form(FixedPointScale::pow2(shift), -ab * ab, ab * ab, true), a,
                         b, "wide pow2 shift " + std::to_string(shift));
    if (shift >= 38)
      expect_vectors_match(Form::WideMultiplier, *wide_product_form(FixedPointScale{m(rng), shift}, -ab * ab, ab * ab, false),
                           a, b, "wide multiplier shift " + std::to_string(shift));
  }
}

}  // namespace
}  // namespace fixq
