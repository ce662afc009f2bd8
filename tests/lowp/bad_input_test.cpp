// Bad input and special values: the documented policy result for NaN, infinities and
// overflow under each policy, and a clear fixq::Error for what cannot be represented or
// does not fit, through every instruction set.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/lowp.h"
#include "support/kernel_paths.h"

namespace fixq {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr Overflow D = Overflow::Default, S = Overflow::Saturate;


std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The code of x in an array long enough to reach the vector path, at position 37.
uint32_t encode_in_array(LowpType t, float x, Overflow o) {
  std::vector<float> v(64, 1.0f);
  v[37] = x;
  if (lowp_info(t).bits == 16) {
    std::vector<uint16_t> c(64);
    lowp_encode(t, v.data(), 64, c.data(), o);
    return c[37];
  }
  std::vector<uint8_t> c(64);
  lowp_encode(t, v.data(), 64, c.data(), o);
  return c[37];
}

struct Expect {
  LowpType type;
  float x;
  Overflow overflow;
  uint32_t code;
};

TEST(LowpSpecials, NanInfAndOverflowFollowTheDocumentedPolicy) {
  const float neg_nan = -kNan;
  const std::vector<Expect> cases = {
      // e4m3fn: no inf; default overflow -> NaN (sign kept), saturate -> +-448, for inf too.
      {LowpType::E4m3fn, 464.0f, D, 0x7E},  // the overflow tie rounds to even 448
      {LowpType::E4m3fn, 464.01f, D, 0x7F},
      {LowpType::E4m3fn, 1e9f, D, 0x7F},
      {LowpType::E4m3fn, -1e9f, D, 0xFF},
      {LowpType::E4m3fn, kInf, D, 0x7F},
      {LowpType::E4m3fn, -kInf, D, 0xFF},
      {LowpType::E4m3fn, 1e9f, S, 0x7E},
      {LowpType::E4m3fn, kInf, S, 0x7E},
      {LowpType::E4m3fn, -kInf, S, 0xFE},
      {LowpType::E4m3fn, kNan, S, 0x7F},
      {LowpType::E4m3fn, neg_nan, D, 0xFF},
      // e5m2: IEEE-style; 61440 is the overflow tie and 57344's mantissa is odd.
      {LowpType::E5m2, 61440.0f, D, 0x7C},
      {LowpType::E5m2, 61440.0f, S, 0x7B},
      {LowpType::E5m2, -kInf, D, 0xFC},
      {LowpType::E5m2, -kInf, S, 0xFB},
      {LowpType::E5m2, kNan, D, 0x7E},
      {LowpType::E5m2, neg_nan, S, 0xFE},
      // fnuz: one NaN 0x80, no -0.
      {LowpType::E4m3fnuz, 1e9f, D, 0x80},
      {LowpType::E4m3fnuz, -kInf, D, 0x80},
      {LowpType::E4m3fnuz, -kInf, S, 0xFF},
      {LowpType::E4m3fnuz, neg_nan, S, 0x80},
      {LowpType::E4m3fnuz, -0.0f, D, 0x00},
      {LowpType::E4m3fnuz, -1e-30f, D, 0x00},
      {LowpType::E5m2fnuz, 1e9f, S, 0x7F},
      {LowpType::E4m3b11fnuz, 31.0f, D, 0x80},
      {LowpType::E4m3b11fnuz, 31.0f, S, 0x7F},
      // float6/float4: no inf, no NaN: overflow and inf saturate under both policies.
      {LowpType::E2m1fn, 7.0f, D, 0x7},  // the tie between 6 and 8 rounds to even 6
      {LowpType::E2m1fn, kInf, D, 0x7},
      {LowpType::E2m1fn, -kInf, S, 0xF},
      {LowpType::E2m3fn, -100.0f, D, 0x3F},
      {LowpType::E3m2fn, kInf, D, 0x1F},
      // e8m0: unsigned, no zero.
      {LowpType::E8m0fnu, 0.0f, D, 0xFF},
      {LowpType::E8m0fnu, 0.0f, S, 0x00},
      {LowpType::E8m0fnu, -2.0f, D, 0xFF},
      {LowpType::E8m0fnu, -2.0f, S, 0x00},
      {LowpType::E8m0fnu, 1e-45f, D, 0x00},
      {LowpType::E8m0fnu, 1.5f, D, 128},  // ties round up
      {LowpType::E8m0fnu, kInf, D, 0xFF},
      {LowpType::E8m0fnu, kInf, S, 0xFE},
      {LowpType::E8m0fnu, kNan, S, 0xFF},
      // bf16 / fp16: overflow -> inf, saturate -> max; NaN canonical with its sign.
      {LowpType::Fp16, 65520.0f, D, 0x7C00},
      {LowpType::Fp16, 65520.0f, S, 0x7BFF},
      {LowpType::Fp16, -kInf, S, 0xFBFF},
      {LowpType::Fp16, neg_nan, D, 0xFE00},
      {LowpType::Bf16, std::numeric_limits<float>::max(), D, 0x7F80},
      {LowpType::Bf16, std::numeric_limits<float>::max(), S, 0x7F7F},
      {LowpType::Bf16, kInf, S, 0x7F7F},
      {LowpType::Bf16, kNan, D, 0x7FC0},
  };
  test::PathGuard guard;
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    for (const Expect& c : cases) {
      const std::string what = std::string(lowp_info(c.type).name) + (c.overflow == D ? " default " : " saturate ") +
                               std::to_string(c.x) + " on " + path.name();
      EXPECT_EQ(lowp_encode(c.type, c.x, c.overflow), c.code) << what;
      EXPECT_EQ(encode_in_array(c.type, c.x, c.overflow), c.code) << what;
    }
  }
}

TEST(LowpBadInput, NanIntoATypeWithoutNanIsAnErrorNamingTheElement) {
  test::PathGuard guard;
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    for (const LowpType t : {LowpType::E2m3fn, LowpType::E3m2fn, LowpType::E2m1fn}) {
      for (const Overflow o : {D, S}) {
        EXPECT_EQ(message_of([&] { lowp_encode(t, kNan, o); }),
                  "element 0 is NaN, which " + std::string(lowp_info(t).name) + " cannot represent (it has no NaN)");
        std::vector<float> x(100, 0.5f);
        x[61] = -kNan;
        x[90] = kNan;
        std::vector<uint8_t> c(100);
        EXPECT_EQ(message_of([&] { lowp_encode(t, x.data(), 100, c.data(), o); }),
                  "element 61 is NaN, which " + std::string(lowp_info(t).name) + " cannot represent (it has no NaN)")
            << path.name();
      }
    }
  }
}

TEST(LowpBadInput, CodesBeyondTheTypeAreErrorsNamingTheElement) {
  test::PathGuard guard;
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    std::vector<uint8_t> c(50, 3);
    c[44] = 0x40;
    std::vector<float> x(50);
    EXPECT_EQ(message_of([&] { lowp_decode(LowpType::E2m3fn, c.data(), 50, x.data()); }),
              "element 44 = 64 is not a e2m3fn code (6 bits)")
        << path.name();
    c[44] = 0x10;
    EXPECT_NO_THROW(lowp_decode(LowpType::E2m3fn, c.data(), 50, x.data()));
    EXPECT_THROW(lowp_decode(LowpType::E2m1fn, c.data(), 50, x.data()), Error);
    EXPECT_THROW(lowp_decode(LowpType::E2m1fn, 16), Error);
    EXPECT_THROW(lowp_decode(LowpType::E4m3fn, 256), Error);
  }
}

TEST(LowpBadInput, WrongCodeWidthCountOrPointerIsAnError) {
  std::vector<float> x(4, 1.0f);
  std::vector<uint8_t> c8(4);
  std::vector<uint16_t> c16(4);
  EXPECT_EQ(message_of([&] { lowp_encode(LowpType::Bf16, x.data(), 4, c8.data()); }),
            "bf16 codes are uint16_t, not uint8_t");
  EXPECT_THROW(lowp_encode(LowpType::E4m3fn, x.data(), 4, c16.data()), Error);
  EXPECT_THROW(lowp_decode(LowpType::Fp16, c8.data(), 4, x.data()), Error);
  EXPECT_THROW(lowp_decode(LowpType::E5m2, c16.data(), 4, x.data()), Error);
  EXPECT_THROW(lowp_encode(LowpType::E5m2, x.data(), -1, c8.data()), Error);
  EXPECT_THROW(lowp_encode(LowpType::E5m2, nullptr, 4, c8.data()), Error);
  EXPECT_NO_THROW(lowp_encode(LowpType::E5m2, nullptr, 0, c8.data()));
  EXPECT_THROW(lowp_info(static_cast<LowpType>(11)), Error);
  EXPECT_EQ(message_of([] { parse_lowp_type("e4m3"); }),
            "unknown low-precision type 'e4m3'; known: e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0fnu, e4m3b11fnuz, "
            "e2m3fn, e3m2fn, e2m1fn, bf16, fp16");
}

}  // namespace
}  // namespace fixq
