// The quantized primitives (rescale, add, multiply; docs/spec.md 2.5) against exact rational oracles.
//
// With power-of-two scales every ratio is exact, so the integer result must equal the
// real formula rounded half up, exactly. With multipliers, the result must equal the
// (m, shift) formula exactly and stay within the documented bound of the real formula.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fixq/arith.h"
#include "fixq/arith.h"
#include "fixq/error.h"

namespace fixq {
namespace {

using detail::int128;

// floor(num / 2^n + 1/2) for an exact rational num / 2^n (n may be negative).
int64_t round_half_up_pow2(int128 num, int n) {
  if (n <= 0) return static_cast<int64_t>(num * (int128{1} << -n));
  const int128 sum = num + (int128{1} << (n - 1));
  const int128 d = int128{1} << n;
  int128 q = sum / d;
  if (sum % d != 0 && sum < 0) q -= 1;
  return static_cast<int64_t>(q);
}

int32_t clamp(int64_t v, IntRange r) { return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, r.qmin), r.qmax)); }

TEST(Rescale, PowerOfTwoIsExactRoundHalfUp) {
  std::mt19937 rng(7);
  const IntRange out8{-128, 127}, out16{-32768, 32767};
  for (int i = 0; i < 500'000; ++i) {
    const int ex = static_cast<int>(rng() % 20), ey = static_cast<int>(rng() % 20);
    const int32_t zx = static_cast<int32_t>(rng() % 256) - 128, zy = static_cast<int32_t>(rng() % 256) - 128;
    const IntRange out = (i & 1) ? out8 : out16;
    const Rescale r = Rescale::make(std::ldexp(1.0, -ex), zx, std::ldexp(1.0, -ey), zy, out, ScaleKind::PowerOfTwo);
    const int32_t qx = static_cast<int32_t>(rng() % 65536) - 32768;
    // q_y = (q_x - Z_x) * 2^-ex / 2^-ey + Z_y = (q_x - Z_x) / 2^(ex-ey) + Z_y
    const int64_t want = round_half_up_pow2(int128{qx} - zx, ex - ey) + zy;
    ASSERT_EQ(r(qx), clamp(want, out)) << qx << " " << ex << " " << ey;
  }
}

TEST(Rescale, MultiplierWithinBoundOfRealFormula) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> ls(-12.0, 0.0);
  const IntRange out{-32768, 32767};
  for (int i = 0; i < 500'000; ++i) {
    const double sx = std::exp2(ls(rng)), sy = std::exp2(ls(rng));
    const int32_t zx = static_cast<int32_t>(rng() % 200) - 100, zy = static_cast<int32_t>(rng() % 200) - 100;
    const Rescale r = Rescale::make(sx, zx, sy, zy, out, ScaleKind::Multiplier);
    const int32_t qx = static_cast<int32_t>(rng() % 65536) - 32768;
    // Exact against the (m, shift) definition...
    const int64_t def = round_half_up_pow2(int128{int64_t{qx} - zx} * r.ratio.m, r.ratio.shift) + zy;
    ASSERT_EQ(r(qx), clamp(def, out));
    // ...and within 1/2 + |d| * sigma * 2^-31 (+ double rounding slack) of the real value.
    const long double real = static_cast<long double>(sx) / sy * (qx - zx) + zy;
    if (real > out.qmin && real < out.qmax) {
      const long double bound = 0.5L + std::fabs(static_cast<long double>(qx - zx)) * (sx / sy) * 0x1p-31L + 1e-9L;
      ASSERT_LE(std::fabs(static_cast<long double>(r(qx)) - real), bound) << sx << " " << sy << " " << qx;
    }
  }
}

TEST(QuantizedAdd, PowerOfTwoTermsRoundedThenSummed) {
  std::mt19937 rng(9);
  const IntRange out{-32768, 32767};
  for (int i = 0; i < 500'000; ++i) {
    const int ex = static_cast<int>(rng() % 16), ey = static_cast<int>(rng() % 16), ez = static_cast<int>(rng() % 16);
    const int32_t zx = static_cast<int32_t>(rng() % 256) - 128, zy = static_cast<int32_t>(rng() % 256) - 128,
                  zz = static_cast<int32_t>(rng() % 256) - 128;
    const QuantizedAdd add = QuantizedAdd::make(std::ldexp(1.0, -ex), zx, std::ldexp(1.0, -ey), zy,
                                                std::ldexp(1.0, -ez), zz, out, ScaleKind::PowerOfTwo);
    const int32_t qx = static_cast<int32_t>(rng() % 65536) - 32768, qy = static_cast<int32_t>(rng() % 65536) - 32768;
    const int64_t tx = round_half_up_pow2(int128{qx} - zx, ex - ez);
    const int64_t ty = round_half_up_pow2(int128{qy} - zy, ey - ez);
    ASSERT_EQ(add(qx, qy), clamp(tx + ty + zz, out));
    // And within one LSB of the exact real sum (two roundings of at most 1/2 each).
    const long double exact = std::ldexp(static_cast<long double>(qx - zx), ez - ex) +
                              std::ldexp(static_cast<long double>(qy - zy), ez - ey) + zz;
    if (exact > out.qmin && exact < out.qmax) {
      ASSERT_LE(std::fabs(add(qx, qy) - exact), 1.0L);
    }
  }
}

TEST(QuantizedMul, PowerOfTwoIsExactRoundHalfUpOfProduct) {
  std::mt19937 rng(10);
  const IntRange out{-32768, 32767};
  for (int i = 0; i < 500'000; ++i) {
    const int ex = static_cast<int>(rng() % 16), ey = static_cast<int>(rng() % 16), ez = static_cast<int>(rng() % 16);
    const int32_t zx = static_cast<int32_t>(rng() % 256) - 128, zy = static_cast<int32_t>(rng() % 256) - 128,
                  zz = static_cast<int32_t>(rng() % 256) - 128;
    const QuantizedMul mul = QuantizedMul::make(std::ldexp(1.0, -ex), zx, std::ldexp(1.0, -ey), zy,
                                                std::ldexp(1.0, -ez), zz, out, ScaleKind::PowerOfTwo);
    const int32_t qx = static_cast<int32_t>(rng() % 65536) - 32768, qy = static_cast<int32_t>(rng() % 65536) - 32768;
    // S_x S_y / S_z = 2^(ez - ex - ey)
    const int64_t want = round_half_up_pow2((int128{qx} - zx) * (int128{qy} - zy), ex + ey - ez) + zz;
    ASSERT_EQ(mul(qx, qy), clamp(want, out)) << qx << " " << qy;
  }
}

TEST(QuantizedMul, MultiplierMatchesDefinitionAtExtremes) {
  const IntRange out{-32768, 32767};
  const QuantizedMul mul = QuantizedMul::make(0.01, -32768, 0.02, 32767, 0.003, 5, out, ScaleKind::Multiplier);
  for (int32_t qx : {-32768, 32767, 0}) {
    for (int32_t qy : {-32768, 32767, 0}) {
      const int128 p = (int128{qx} + 32768) * (int128{qy} - 32767);
      const int64_t def = round_half_up_pow2(p * mul.ratio.m, mul.ratio.shift) + 5;
      EXPECT_EQ(mul(qx, qy), clamp(def, out));
    }
  }
}

TEST(QuantizedOps, RejectBadParameters) {
  const IntRange out{-128, 127};
  EXPECT_THROW(Rescale::make(0.1, 0, 0.3, 0, out, ScaleKind::PowerOfTwo), Error);  // ratio not 2^k
  EXPECT_THROW(Rescale::make(0.0, 0, 0.3, 0, out, ScaleKind::Multiplier), Error);
  EXPECT_THROW(Rescale::make(0.1, 0, std::nan(""), 0, out, ScaleKind::Multiplier), Error);
  EXPECT_THROW(Rescale::make(1e-20, 0, 1.0, 0, out, ScaleKind::Multiplier), Error);  // ratio < 2^-40
  EXPECT_THROW(Rescale::make(0.5, 0, 1.0, 0, IntRange{5, 4}, ScaleKind::Multiplier), Error);
  EXPECT_THROW(QuantizedAdd::make(0.5, 0, -1.0, 0, 1.0, 0, out, ScaleKind::Multiplier), Error);
  EXPECT_THROW(QuantizedMul::make(0.5, 0, 0.5, 0, 0.3, 0, out, ScaleKind::PowerOfTwo), Error);
}

}  // namespace
}  // namespace fixq
