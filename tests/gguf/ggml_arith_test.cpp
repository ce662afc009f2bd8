// The scalar primitives of gguf/ggml_arith.h against independent oracles: the CPU's own
// F16C and cvttss2si instructions (what ggml's build computes with), a search over every
// half, std::nearbyint and std::ldexp.
#include <gtest/gtest.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "fixq/cpu.h"
#include "gguf/ggml_arith.h"

namespace fixq::gguf::detail {
namespace {

#if defined(__x86_64__)
// F16C, compiled for this function only; called only when the CPU has it.
__attribute__((target("f16c"))) uint16_t f16c_from_float(float f) { return _cvtss_sh(f, 0); }
__attribute__((target("f16c"))) float f16c_to_float(uint16_t h) { return _cvtsh_ss(h); }

bool has_f16c() { return cpu_supports(Isa::Avx2); }
#elif defined(__aarch64__)
// aarch64's own half conversions (FCVT, round to nearest even), which every aarch64 CPU has.
uint16_t f16c_from_float(float f) { return std::bit_cast<uint16_t>(static_cast<__fp16>(f)); }
float f16c_to_float(uint16_t h) { return static_cast<float>(std::bit_cast<__fp16>(h)); }

bool has_f16c() { return true; }
#else
uint16_t f16c_from_float(float) { return 0; }
float f16c_to_float(uint16_t) { return 0; }
bool has_f16c() { return false; }
#endif

// The nearest half to a finite f, ties to the even one, found by bisection over the
// positive halves (ordered like their bit patterns) in double: no conversion algorithm.
uint16_t fp16_oracle(float f) {
  const double a = std::fabs(static_cast<double>(f));
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (a >= 65520.0) return sign | 0x7C00;  // at or past the midpoint of 65504 and 2^16
  const auto value = [](uint32_t h) { return static_cast<double>(fp16_to_fp32(static_cast<uint16_t>(h))); };
  uint32_t lo = 0, hi = 0x7BFF;  // value(lo) <= a <= value(hi) after the search
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (value(mid) <= a ? lo : hi) = mid;
  }
  if (value(hi) <= a) lo = hi;
  const double dlo = a - value(lo), dhi = value(lo + 1) - a;
  const uint32_t pick = dlo < dhi ? lo : dhi < dlo ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  return static_cast<uint16_t>(sign | pick);
}

TEST(GgmlArith, Fp16ToFp32IsExactForEveryHalf) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    const uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF;
    if (e == 0x1F) {
      EXPECT_TRUE(m ? std::isnan(f) : std::isinf(f)) << h;
    } else {
      const double want = (e ? std::ldexp(1024.0 + m, static_cast<int>(e) - 25) : std::ldexp(static_cast<double>(m), -24)) *
                          ((h & 0x8000) ? -1.0 : 1.0);
      EXPECT_EQ(std::bit_cast<uint64_t>(static_cast<double>(f)), std::bit_cast<uint64_t>(want)) << h;
    }
    if (has_f16c()) {
      ASSERT_EQ(std::bit_cast<uint32_t>(f), std::bit_cast<uint32_t>(f16c_to_float(static_cast<uint16_t>(h)))) << h;
    }
  }
}

// Every rounding situation of every exponent and leading mantissa: the 13 bits that are
// rounded away take the values below, around and at the half-way point.
TEST(GgmlArith, Fp32ToFp16MatchesF16cOnEveryRoundingCase) {
  if (!has_f16c()) GTEST_SKIP() << "no F16C here; the oracle test below still runs";
  const uint32_t tails[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF};
  int64_t checked = 0;
  for (uint32_t top = 0; top < (1u << 19); ++top) {
    for (uint32_t tail : tails) {
      const uint32_t bits = (top << 13) | tail;
      const float f = std::bit_cast<float>(bits);
      if (std::isnan(f)) continue;  // fixq gives sign | 0x7E00 (ggml's choice), F16C keeps payload bits
      ASSERT_EQ(fp32_to_fp16(f), f16c_from_float(f)) << std::hex << bits;
      ++checked;
    }
  }
  EXPECT_GT(checked, 3000000);
}

TEST(GgmlArith, Fp32ToFp16MatchesTheNearestHalfSearch) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    // exponents around the half range, including subnormal halves and overflow
    const float f = std::ldexp(static_cast<float>(rng() % (1u << 24)) / 16777216.0f, static_cast<int>(rng() % 50) - 30) *
                    ((rng() & 1) ? 1.0f : -1.0f);
    ASSERT_EQ(fp32_to_fp16(f), fp16_oracle(f)) << f;
  }
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65519.99f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);                 // the tie goes up, to infinity
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);    // tie between 0 and 2^-24: even
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);    // 1.5 units: tie to even 2
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(GgmlArith, NearestIntRoundsHalfToEvenUpTo2Pow22) {
  std::mt19937 rng(3);
  for (int i = 0; i < 1000000; ++i) {
    const float v = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % (1u << 24)) - (1 << 23)),
                               -static_cast<int>(rng() % 24)) * 0.5f;  // |v| <= 2^22
    ASSERT_EQ(nearest_int(v), static_cast<int32_t>(std::nearbyint(v))) << v;
  }
  EXPECT_EQ(nearest_int(0.5f), 0);
  EXPECT_EQ(nearest_int(1.5f), 2);
  EXPECT_EQ(nearest_int(-2.5f), -2);
  EXPECT_EQ(nearest_int(-85.5f), -86);
  EXPECT_EQ(nearest_int(4194303.0f), 4194303);
}

TEST(GgmlArith, X86TruncateIsCvttss2si) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the oracle is x86's cvttss2si instruction; this is not an x86-64 build";
#else
  const float specials[] = {0.0f, -0.0f, 0.99f, -0.99f, 127.9f, -128.5f, 2147483520.0f, 2147483648.0f, -2147483648.0f,
                            -2147483904.0f, 1e20f, -1e20f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min()};
  for (float v : specials) EXPECT_EQ(x86_truncate(v), _mm_cvttss_si32(_mm_set_ss(v))) << v;
  std::mt19937 rng(9);
  for (int i = 0; i < 1000000; ++i) {
    const float v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    ASSERT_EQ(x86_truncate(v), _mm_cvttss_si32(_mm_set_ss(v))) << v;
  }
  EXPECT_EQ(x86_float_to_i8(200.0f), -56);  // the low byte of 200
  EXPECT_EQ(x86_float_to_i8(std::numeric_limits<float>::infinity()), 0);
  EXPECT_EQ(x86_float_to_u8(-24.0f), 232);
#endif
}

TEST(GgmlArith, E8m0HalfIsTwoToTheEMinus128) {
  for (int e = 0; e < 256; ++e)
    EXPECT_EQ(std::bit_cast<uint32_t>(e8m0_half(static_cast<uint8_t>(e))), std::bit_cast<uint32_t>(std::ldexp(1.0f, e - 128)))
        << e;
}

}  // namespace
}  // namespace fixq::gguf::detail
