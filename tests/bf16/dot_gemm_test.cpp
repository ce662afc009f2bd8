// bf16 dot products and GEMM on every kernel path (scalar reference, AVX2, AVX512_BF16
// native where the CPU has it, and through SIMDe) against the scalar reference, bit for
// bit, on ragged lengths and shapes, denormals, infinities and NaN (NaN results compared
// as NaN only: payloads are not part of the contract). Worked examples pin the semantics
// the reference states (fixq/bf16.h): the odd product first, DAZ on inputs, FTZ on
// results; on a CPU with AVX512_BF16 the native path runs vdpbf16ps itself, so the same
// tests hold the reference to the hardware's bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "bf16/kernels.h"
#include "fixq/bf16.h"
#include "fixq/cpu.h"
#include "support/expect.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"

namespace fixq::bf16 {
namespace {

using fixq::test::expect_error;
using fixq::test::KernelPath;
using fixq::test::PathScope;

uint16_t bf(float x) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16); }  // exact for these
uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }
bool same(float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

// Random bf16 patterns of every kind: normal values of moderate size (mostly), subnormals,
// zeros of both signs, huge values whose products overflow, infinities and NaNs.
std::vector<uint16_t> mixed(std::size_t n, std::mt19937& rng, bool specials) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    const uint32_t r = rng();
    const uint16_t sign = static_cast<uint16_t>(r & 0x8000u);
    switch (specials ? r % 16 : 0) {
      case 1: x = sign | static_cast<uint16_t>(1 + (r >> 16) % 0x7F); break;    // subnormal
      case 2: x = sign; break;                                                 // +-0
      case 3: x = sign | static_cast<uint16_t>(0x7E00 + (r >> 20) % 0x80); break;  // near max
      case 4: x = sign | 0x7F80; break;                                        // +-inf
      case 5: x = sign | static_cast<uint16_t>(0x7F81 + (r >> 20) % 0x7E); break;  // NaN
      case 6: x = sign | static_cast<uint16_t>(0x0080 + (r >> 20) % 0x800); break;  // tiny normal: products underflow
      default: x = sign | static_cast<uint16_t>(((112 + (r >> 8) % 32) << 7) | ((r >> 16) & 0x7F)); break;
    }
  }
  return v;
}

class Bf16Paths : public ::testing::TestWithParam<KernelPath> {};

TEST_P(Bf16Paths, DotMatchesTheReferenceOnRaggedLengths) {
  std::mt19937 rng(11);
  for (int64_t k = 0; k <= 300; ++k) {
    for (bool specials : {false, true}) {
      // one element of slack on each side: misaligned starts
      const std::vector<uint16_t> a = mixed(static_cast<std::size_t>(k) + 1, rng, specials),
                                  b = mixed(static_cast<std::size_t>(k) + 1, rng, specials);
      const std::span<const uint16_t> sa = std::span(a).subspan(1), sb = std::span(b).subspan(1);
      float want, got;
      {
        PathScope s(fixq::test::scalar_path());
        want = dot(sa, sb);
      }
      {
        PathScope s(GetParam());
        got = dot(sa, sb);
      }
      ASSERT_TRUE(same(want, got)) << "k = " << k << (specials ? " with specials" : "") << ": " << want << " vs "
                                   << got;
    }
  }
  for (int64_t k : {1000, 4096, 4097, 10000}) {
    const std::vector<uint16_t> a = mixed(static_cast<std::size_t>(k), rng, false), b = mixed(static_cast<std::size_t>(k), rng, false);
    float want;
    {
      PathScope s(fixq::test::scalar_path());
      want = dot(a, b);
    }
    PathScope s(GetParam());
    EXPECT_EQ(bits(want), bits(dot(a, b))) << "k = " << k;
  }
}

// The step's definition on hand-made cases, each of which another reading would break.
TEST_P(Bf16Paths, DotFollowsTheInstructionsSemantics) {
  PathScope s(GetParam());
  const uint16_t one = bf(1.0f);
  // Lane 0 steps through elements 1, 0, 129, 128 (pairs 0 and 64): 1, then 1 + 2^-24 (a
  // tie, to even: 1), then 1 + 2^-24 (1 again), then 1 - 1 = +0. The even-first order
  // would end at 2^-24.
  std::vector<uint16_t> a(130, 0), b(130, one);
  a[0] = bf(0x1p-24f), a[1] = one, a[128] = bf(-1.0f), a[129] = bf(0x1p-24f);
  EXPECT_EQ(bits(dot(a, b)), bits(0.0f));
  // DAZ: a subnormal input is zero (not 2^-133 * 2^10).
  EXPECT_EQ(bits(dot(std::vector<uint16_t>{0x0001}, std::vector<uint16_t>{bf(1024.0f)})), bits(0.0f));
  // FTZ: 2^-100 * 2^-30 = 2^-130 is subnormal: flushed to zero (+0 after the sum).
  EXPECT_EQ(bits(dot(std::vector<uint16_t>{bf(0x1p-100f)}, std::vector<uint16_t>{bf(0x1p-30f)})), bits(0.0f));
  // ... but 2^-100 * 2^-26 = 2^-126 is normal and stays.
  EXPECT_EQ(bits(dot(std::vector<uint16_t>{bf(0x1p-100f)}, std::vector<uint16_t>{bf(0x1p-26f)})), bits(0x1p-126f));
  // One fused step: the product itself is not flushed. 1.5 * 2^-126 (odd pair, first)
  // plus -2^-64 * 2^-63 = -2^-127 (subnormal as a product on its own) is 2^-126; a
  // flushed product would leave 1.5 * 2^-126.
  {
    const std::vector<uint16_t> x{bf(-0x1p-64f), bf(0x1.8p-63f)}, y{bf(0x1p-63f), bf(0x1p-63f)};
    EXPECT_EQ(bits(dot(x, y)), bits(0x1p-126f));
  }
  // Tininess after rounding with an unbounded exponent: lane 0 holds 2^-126 + 2^-149 after
  // pair 0 (2^-63 * 2^-63, then 2^-75 * 2^-74), then adds -(13 * 2^-80)(197 * 2^-80): the
  // exact 2^-126 - 513 * 2^-160 rounds to 2^-126 - 2^-150 at 24 bits, below 2^-126, so
  // vdpbf16ps flushes it to +0 (checked on Zen 5's AVX512_BF16), although rounding into
  // the subnormal format would give 2^-126.
  {
    std::vector<uint16_t> x(130, 0), y(130, 0);
    x[1] = y[1] = bf(0x1p-63f);
    x[0] = bf(0x1p-75f), y[0] = bf(0x1p-74f);
    x[129] = bf(-0x1.ap-77f), y[129] = bf(0x1.8ap-73f);
    EXPECT_EQ(bits(dot(x, y)), bits(0.0f));
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(dot(std::vector<uint16_t>{bf(inf), one}, std::vector<uint16_t>{one, one}), inf);
  EXPECT_TRUE(std::isnan(dot(std::vector<uint16_t>{bf(inf)}, std::vector<uint16_t>{0})));           // inf * 0
  EXPECT_TRUE(std::isnan(dot(std::vector<uint16_t>{bf(inf), bf(-inf)}, std::vector<uint16_t>{one, one})));  // inf - inf
  EXPECT_TRUE(std::isnan(dot(std::vector<uint16_t>{0x7FC1, one}, std::vector<uint16_t>{one, one})));  // NaN in
  // Overflow of a product: max * max is +inf.
  EXPECT_EQ(dot(std::vector<uint16_t>{0x7F7F}, std::vector<uint16_t>{0x7F7F}), inf);
}

// An independent check of the sums' size: |dot - exact| <= K * 2^-23 * sum |a b| on
// finite, normal data (each step rounds once, each partial sum bounded by sum |a b|).
TEST_P(Bf16Paths, DotIsCloseToTheExactSum) {
  PathScope s(GetParam());
  std::mt19937 rng(3);
  for (int64_t k : {1, 7, 128, 129, 1000, 4096}) {
    const std::vector<uint16_t> a = mixed(static_cast<std::size_t>(k), rng, false), b = mixed(static_cast<std::size_t>(k), rng, false);
    double exact = 0.0, mag = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      const double p = double{to_float(a[static_cast<std::size_t>(i)])} * to_float(b[static_cast<std::size_t>(i)]);
      exact += p;
      mag += std::fabs(p);
    }
    EXPECT_LE(std::fabs(double{dot(a, b)} - exact), static_cast<double>(k + 8) * 0x1p-23 * mag) << "k = " << k;
  }
}

TEST_P(Bf16Paths, GemmMatchesTheReferenceOnRaggedShapes) {
  std::mt19937 rng(5);
  for (int64_t m : {1, 2, 3, 5, 8, 9, 17}) {
    for (int64_t n : {1, 15, 16, 17, 32, 33, 65}) {
      for (int64_t k : {1, 2, 3, 31, 255, 256, 257, 300}) {
        const bool specials = (m + n + k) % 3 == 0;
        const int64_t lda = k + 3, ldc = n + 2;
        const std::vector<uint16_t> a = mixed(static_cast<std::size_t>(m * lda), rng, specials);
        const std::vector<uint16_t> w = mixed(static_cast<std::size_t>(n * k), rng, specials);
        const PackedB pb = PackedB::pack(w, n, k);
        std::vector<float> want(static_cast<std::size_t>(m * ldc), 7.0f), got = want;
        {
          PathScope s(fixq::test::scalar_path());
          gemm(a.data(), m, lda, pb, want.data(), ldc);
        }
        {
          PathScope s(GetParam());
          gemm(a.data(), m, lda, pb, got.data(), ldc);
        }
        int bad = 0;
        for (std::size_t i = 0; i < want.size(); ++i)
          if (!same(want[i], got[i]) && ++bad <= 3)
            ADD_FAILURE() << m << "x" << n << "x" << k << " at " << i / ldc << "," << i % ldc << ": " << want[i]
                          << " vs " << got[i];
        ASSERT_EQ(bad, 0);
      }
    }
  }
}

// Larger shapes cross the AVX-512 kernel's cache blocks: K of more than 1024 pairs in
// blocks of 512 (three here, the last partial and ending on an odd k) and rows in blocks
// of 192, then a partial row tile; K of up to 1024 pairs as one block (1024 here, ending
// on an odd k), rows in blocks of 132. The streaming form of up to 18 rows: one row tile
// takes K in blocks of 65536 pairs (two here, the second of one pair), two or three row
// tiles in blocks of 1024 (three, the last partial), each tile's panels fetched ahead
// past the packed weights' end.
TEST_P(Bf16Paths, GemmMatchesTheReferenceAcrossCacheBlocks) {
  std::mt19937 rng(9);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{205, 70, 2051},
                         {140, 97, 2047},
                         {1, 33, 131073},
                         {6, 17, 2051},
                         {17, 70, 4099},
                         {18, 97, 2051}}) {
    const std::vector<uint16_t> a = mixed(static_cast<std::size_t>(m * k), rng, false),
                                w = mixed(static_cast<std::size_t>(n * k), rng, false);
    const PackedB pb = PackedB::pack(w, n, k);
    std::vector<float> want(static_cast<std::size_t>(m * n)), got(want.size());
    {
      PathScope s(fixq::test::scalar_path());
      gemm(a.data(), m, k, pb, want.data(), n);
    }
    PathScope s(GetParam());
    gemm(a.data(), m, k, pb, got.data(), n);
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(bits(want[i]), bits(got[i])) << m << "x" << n << "x" << k << " " << i;
  }
}

// Each output is one chain through its pairs: row i of the GEMM against a 1-row GEMM of
// the same operands, and f32 activations are the bf16 ones after RNE conversion.
TEST_P(Bf16Paths, GemmRowsAreIndependentAndFloatActivationsConvertFirst) {
  PathScope s(GetParam());
  std::mt19937 rng(2);
  std::normal_distribution<float> g;
  const int64_t m = 6, n = 40, k = 77;
  std::vector<float> af(static_cast<std::size_t>(m * k));
  for (float& x : af) x = g(rng);
  const std::vector<uint16_t> a = from_float(af), w = mixed(static_cast<std::size_t>(n * k), rng, false);
  const PackedB pb = PackedB::pack(w, n, k);
  std::vector<float> c16(static_cast<std::size_t>(m * n)), c32(c16.size()), row(static_cast<std::size_t>(n));
  gemm(a.data(), m, k, pb, c16.data(), n);
  gemm(af.data(), m, k, pb, c32.data(), n);
  EXPECT_EQ(std::memcmp(c16.data(), c32.data(), c16.size() * 4), 0);
  for (int64_t i = 0; i < m; ++i) {
    gemm(a.data() + i * k, 1, k, pb, row.data(), n);
    EXPECT_EQ(std::memcmp(row.data(), c16.data() + i * n, row.size() * 4), 0) << "row " << i;
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Bf16Paths);
INSTANTIATE_TEST_SUITE_P(EveryPath, Bf16Paths, ::testing::ValuesIn(fixq::test::kernel_paths()),
                         [](const ::testing::TestParamInfo<KernelPath>& i) { return i.param.name(); });

TEST(Bf16, EveryInstructionSetIsExercised) {
  test::expect_complete(bf16_detail::registry());
  test::expect_each_family_runs_its_own(bf16_detail::registry(), [](const bf16_detail::Bf16Kernels& k) { return k.dot; }, "dot");
  test::expect_each_family_runs_its_own(bf16_detail::registry(), [](const bf16_detail::Bf16Kernels& k) { return k.gemm; }, "gemm");
}

// The native instruction is the oracle: said so, and skipped only where the CPU lacks it
// (the emulated path above still runs the same kernel source).
TEST(Bf16, NativeVdpbf16psRunsWhereTheCpuHasIt) {
  if (!cpu_supports(Isa::Avx512Bf16)) GTEST_SKIP() << "this CPU has no AVX512_BF16: the hardware comparison needs one";
  PathScope s({Isa::Avx512Bf16, false});
  EXPECT_EQ(bf16_detail::registry().pick([](const bf16_detail::Bf16Kernels& k) { return k.dot; }).isa, Isa::Avx512Bf16);
}

TEST(Bf16BadInput, ShapesStridesAndSizes) {
  const std::vector<uint16_t> x(10), y(11);
  expect_error([&] { dot(x, y); }, "10", "11", "same length");
  expect_error([&] { PackedB::pack(x, 3, 4); }, "10 values", "[3, 4]");
  expect_error([&] { PackedB::pack(x, -1, 4); }, "negative");
  expect_error([&] { PackedB::pack(x.data(), 2, 5, 4); }, "row stride 4", "5 columns");
  const PackedB pb = PackedB::pack(x, 2, 5);
  std::vector<float> c(4);
  expect_error([&] { gemm(x.data(), 2, 4, pb, c.data(), 2); }, "activations", "row stride 4");
  expect_error([&] { gemm(x.data(), 2, 5, pb, c.data(), 1); }, "output", "row stride 1");
  expect_error([&] { gemm(x.data(), -2, 5, pb, c.data(), 2); }, "negative");
  expect_error([&] { gemm(static_cast<const uint16_t*>(nullptr), 2, 5, pb, c.data(), 2); }, "null");
  expect_error([&] { gemm(x.data(), 2, 5, pb, nullptr, 2); }, "null");
  std::vector<uint16_t> out(3);
  expect_error([&] { from_float(std::vector<float>(4), out); }, "4 floats", "3 bf16");
}

TEST(Bf16, EmptyOperands) {
  EXPECT_EQ(bits(dot(std::vector<uint16_t>{}, std::vector<uint16_t>{})), bits(0.0f));
  const PackedB pb = PackedB::pack(std::vector<uint16_t>{}, 3, 0);
  std::vector<float> c(6, 5.0f);
  gemm(static_cast<const uint16_t*>(nullptr), 2, 1, pb, c.data(), 3);
  for (float v : c) EXPECT_EQ(bits(v), bits(0.0f));
}

}  // namespace
}  // namespace fixq::bf16
