// Property tests of Part 1-2 of fixq/arith.h against exact 128-bit oracles.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "fixq/arith.h"
#include "fixq/arith.h"
#include "fixq/error.h"

namespace fixq {
namespace {

using detail::int128;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();

// Oracle: floor((p + 2^(n-1)) / 2^n) evaluated literally in 128 bits (no overflow possible
// for |p| < 2^100, n <= 120), i.e. p / 2^n rounded half up.
int128 oracle_round_half_up(int128 p, int n) {
  if (n == 0) return p;
  const int128 sum = p + (int128{1} << (n - 1));
  // floor division by 2^n for either sign.
  const int128 d = int128{1} << n;
  int128 q = sum / d;
  if (sum % d != 0 && sum < 0) q -= 1;
  return q;
}

int64_t sat64(int128 v) { return v > kI64Max ? kI64Max : v < kI64Min ? kI64Min : static_cast<int64_t>(v); }

// Random int32 spread over every magnitude, not just the large ones.
int32_t random_i32(std::mt19937_64& rng) {
  const int bits = static_cast<int>(rng() % 32);
  int64_t v = static_cast<int64_t>(rng() & ((uint64_t{1} << bits) - 1));
  if (rng() & 1) v = -v - 1;
  return static_cast<int32_t>(v);
}

TEST(RoundingShift, MatchesLiteralFormulaOnRandomAndEdges) {
  std::mt19937_64 rng(1);
  const int64_t edges[] = {0, 1, -1, 2, -2, 3, -3, kI64Max, kI64Min, kI64Max - 1, kI64Min + 1,
                           int64_t{1} << 62, -(int64_t{1} << 62), kI32Max, kI32Min};
  for (int n = 0; n <= 63; ++n)
    for (int64_t x : edges)
      EXPECT_EQ(rounding_shift_right_half_up(x, n), sat64(oracle_round_half_up(x, n))) << x << " " << n;
  for (int i = 0; i < 2'000'000; ++i) {
    const int64_t x = static_cast<int64_t>(rng()) >> (rng() % 64);
    const int n = static_cast<int>(rng() % 64);
    ASSERT_EQ(rounding_shift_right_half_up(x, n), sat64(oracle_round_half_up(x, n))) << x << " " << n;
  }
  // Ties go up (toward +infinity): -1.5 -> -1, 1.5 -> 2, -0.5 -> 0, 0.5 -> 1.
  EXPECT_EQ(rounding_shift_right_half_up(-3, 1), -1);
  EXPECT_EQ(rounding_shift_right_half_up(3, 1), 2);
  EXPECT_EQ(rounding_shift_right_half_up(-1, 1), 0);
  EXPECT_EQ(rounding_shift_right_half_up(1, 1), 1);
  EXPECT_EQ(rounding_shift_right_half_up(kI64Min, 63), -1);
  EXPECT_EQ(rounding_shift_right_half_up(kI64Max, 63), 1);
  EXPECT_EQ(rounding_shift_right_half_up(kI64Min, 64), 0);
}

TEST(RoundHalfEven, MatchesNearbyintInDefaultMode) {
  // std::nearbyint under FE_TONEAREST is an independent implementation of the same rule.
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1'000'000; ++i) {
    const double x = std::ldexp(static_cast<double>(static_cast<int64_t>(rng() >> 11)) - 0x1p52,
                                static_cast<int>(rng() % 80) - 60);
    ASSERT_EQ(round_half_even(x), std::nearbyint(x)) << x;
    const double tie = std::floor(x) + 0.5;
    ASSERT_EQ(round_half_even(tie), std::nearbyint(tie)) << tie;
  }
  EXPECT_EQ(round_half_even(0.5), 0.0);
  EXPECT_EQ(round_half_even(1.5), 2.0);
  EXPECT_EQ(round_half_even(2.5), 2.0);
  EXPECT_EQ(round_half_even(-0.5), 0.0);
  EXPECT_EQ(round_half_even(-2.5), -2.0);
  EXPECT_EQ(round_half_even(0x1p52 + 1), 0x1p52 + 1);
  EXPECT_EQ(round_half_even_saturate(1e30, -128, 127), 127);
  EXPECT_EQ(round_half_even_saturate(-INFINITY, -128, 127), -128);
  EXPECT_EQ(round_half_even_saturate(126.5, -128, 127), 126);
  EXPECT_EQ(round_half_even_saturate(127.5, -128, 127), 127);
}

// The exact value of sigma as Ms * 2^-t with Ms an integer (53-bit mantissa).
void exact_mantissa(double sigma, int128* ms, int* t) {
  int e;
  const double f = std::frexp(sigma, &e);  // f in [0.5, 1)
  *ms = static_cast<int128>(std::ldexp(f, 53));
  *t = 53 - e;
}

TEST(FixedPointScale, FromRealIsNormalizedAndWithinHalfUnit) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> log2s(-40.0, 20.0);
  for (int i = 0; i < 200'000; ++i) {
    const double sigma = std::exp2(log2s(rng));
    const FixedPointScale s = FixedPointScale::from_real(sigma);
    ASSERT_GE(s.m, 1 << 30);
    ASSERT_LT(int64_t{s.m}, int64_t{1} << 31);
    ASSERT_GE(s.shift, 10);
    ASSERT_LE(s.shift, 71);
    // |m - sigma * 2^shift| <= 1/2, evaluated exactly (Sterbenz: both lie in [2^30, 2^31]).
    ASSERT_LE(std::fabs(s.m - std::ldexp(sigma, s.shift)), 0.5) << sigma;
  }
  for (int k = -40; k <= 20; ++k) {
    const FixedPointScale s = FixedPointScale::from_real(std::ldexp(1.0, k));
    EXPECT_EQ(s.m, 1 << 30);
    EXPECT_EQ(s.shift, 30 - k);
    EXPECT_EQ(s.real(), std::ldexp(1.0, k));
  }
  // Just below a power of two, m rounds up to 2^31 and must be renormalized.
  const FixedPointScale s = FixedPointScale::from_real(std::nextafter(1.0, 0.0));
  EXPECT_EQ(s.m, 1 << 30);
  EXPECT_EQ(s.shift, 30);
}

// One spelling per kind of scale, written back exactly as read; the earlier spellings that
// saved configurations and scripts may hold still read as the same kind.
TEST(ScaleKind, OneSpellingAndItsAliases) {
  for (ScaleKind k : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) EXPECT_EQ(parse_scale_kind(to_string(k)), k);
  EXPECT_EQ(to_string(ScaleKind::PowerOfTwo), "pow2");
  EXPECT_EQ(to_string(ScaleKind::Multiplier), "multiplier");
  EXPECT_EQ(parse_scale_kind("float"), ScaleKind::Multiplier);
  EXPECT_EQ(parse_scale_kind("power-of-two"), ScaleKind::PowerOfTwo);
  for (const char* bad : {"", "Pow2", "floats", "mult", "pow2 "}) {
    try {
      parse_scale_kind(bad, "--scales");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--scales must be pow2 or multiplier, got '") + bad + "'");
    }
  }
}

TEST(FixedPointScale, RejectsOutOfRange) {
  for (double bad : {0.0, -1.0, std::ldexp(1.0, -41), std::ldexp(1.0, 21), std::nan(""), std::numeric_limits<double>::infinity()})
    EXPECT_THROW(FixedPointScale::from_real(bad), Error) << bad;
  EXPECT_THROW(FixedPointScale::pow2(127), Error);
  EXPECT_THROW(FixedPointScale::pow2(-63), Error);
  EXPECT_THROW(make_scale(0.3, ScaleKind::PowerOfTwo), Error);
  EXPECT_EQ(make_scale(0.25, ScaleKind::PowerOfTwo), FixedPointScale::pow2(2));
  EXPECT_EQ(make_scale(8.0, ScaleKind::PowerOfTwo), FixedPointScale::pow2(-3));
  try {
    FixedPointScale::from_real(1e9);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the supported range"), std::string::npos);
  }
}

// apply(x) equals round-half-up of x * m / 2^shift exactly, and stays within
// 1/2 + |x| * 2^-(shift+1) of x * sigma.
void check_apply(int32_t x, double sigma) {
  const FixedPointScale s = FixedPointScale::from_real(sigma);
  const int64_t got = s.apply(x);
  ASSERT_EQ(got, sat64(oracle_round_half_up(int128{x} * s.m, s.shift))) << x << " " << sigma;
  // Bound in exact integers: with sigma = ms * 2^-t, multiplying by 2^t clears every
  // denominator: |got * 2^t - x * ms| <= 2^(t-1) + |x| * 2^(t-shift-1). t - shift - 1 is
  // about 21 for every sigma, and every term stays below 2^95.
  int128 ms;
  int t;
  exact_mantissa(sigma, &ms, &t);
  ASSERT_GE(t - s.shift - 1, 0);
  const int128 diff = int128{got} * (int128{1} << t) - int128{x} * ms;
  const int128 absx = x < 0 ? -int128{x} : int128{x};
  const int128 bound = (int128{1} << (t - 1)) + absx * (int128{1} << (t - s.shift - 1));
  ASSERT_LE(diff < 0 ? -diff : diff, bound) << x << " " << sigma;
}

TEST(FixedPointScale, ApplyEqualsExactOracleOnMillionsOfCases) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> log2s(-40.0, 20.0);
  for (int i = 0; i < 3'000'000; ++i) {
    check_apply(random_i32(rng), std::exp2(log2s(rng)));
    if (HasFatalFailure()) return;
  }
  const int32_t xs[] = {kI32Min, kI32Max, kI32Min + 1, 0, 1, -1, 2, -2, 3, -3};
  for (int k = -40; k <= 20; ++k)
    for (int32_t x : xs) {
      check_apply(x, std::ldexp(1.0, k));  // sigma an exact power of two
      if (k > -40) {
        check_apply(x, std::ldexp(1.0, k) * 0.75);
        check_apply(x, std::nextafter(std::ldexp(1.0, k), 0.0));  // m rounds up to 2^31
      }
    }
}

TEST(FixedPointScale, ExactTiesRoundHalfUp) {
  // sigma = 1/2: m = 2^30, shift = 31, so odd x lands exactly on a half.
  const FixedPointScale half = FixedPointScale::from_real(0.5);
  EXPECT_EQ(half.apply(3), 2);    // 1.5 -> 2
  EXPECT_EQ(half.apply(-3), -1);  // -1.5 -> -1
  EXPECT_EQ(half.apply(1), 1);    // 0.5 -> 1
  EXPECT_EQ(half.apply(-1), 0);   // -0.5 -> 0
  EXPECT_EQ(half.apply(kI32Min), kI32Min / 2);
  const FixedPointScale tiny = FixedPointScale::from_real(FixedPointScale::kMinReal);
  EXPECT_EQ(tiny.shift, 70);
  EXPECT_EQ(tiny.apply(kI32Min), 0);
  EXPECT_EQ(tiny.apply(kI32Max), 0);
  EXPECT_EQ(tiny.apply(int64_t{1} << 39), 1);  // 2^39 * 2^-40 = 1/2 -> 1
  EXPECT_EQ(tiny.apply(-(int64_t{1} << 39)), 0);
}

TEST(FixedPointScale, RawShiftsZeroOneAndSixtyTwo) {
  std::mt19937_64 rng(5);
  for (int shift : {0, 1, 2, 31, 62, 63}) {
    for (int i = 0; i < 200'000; ++i) {
      FixedPointScale s;
      s.m = static_cast<int32_t>((int64_t{1} << 30) + static_cast<int64_t>(rng() % (uint64_t{1} << 30)));
      s.shift = shift;
      const int32_t x = i < 4 ? (i == 0 ? kI32Min : i == 1 ? kI32Max : i == 2 ? -1 : 1) : random_i32(rng);
      ASSERT_EQ(s.apply(x), sat64(oracle_round_half_up(int128{x} * s.m, shift))) << x << " " << shift;
    }
  }
}

TEST(FixedPointScale, WideInputsUse128BitProduct) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 500'000; ++i) {
    const int64_t x = static_cast<int64_t>(rng()) >> (rng() % 40);
    FixedPointScale s = FixedPointScale::from_real(std::exp2(std::uniform_real_distribution<double>(-40, 20)(rng)));
    ASSERT_EQ(s.apply(x), sat64(oracle_round_half_up(int128{x} * s.m, s.shift))) << x;
  }
  // Saturation instead of wrap-around.
  EXPECT_EQ(FixedPointScale::from_real(1e6).apply(kI64Max), kI64Max);
  EXPECT_EQ(FixedPointScale::from_real(1e6).apply(kI64Min), kI64Min);
  EXPECT_EQ(FixedPointScale::pow2(-10).apply(kI64Max / 2), kI64Max);
  EXPECT_EQ(FixedPointScale::pow2(-10).apply(-5), -5120);
  EXPECT_EQ(FixedPointScale::pow2(3).apply(-12), -1);  // -1.5 -> -1
  EXPECT_EQ(FixedPointScale::pow2(3).apply(12), 2);    // 1.5 -> 2
}

}  // namespace
}  // namespace fixq
