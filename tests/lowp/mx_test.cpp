// OCP MX blocks against an independent reference written from the spec (shared exponent
// by frexp, elements rounded by reference.h on the exact double V / X, packing written out
// bit by bit), plus idempotence, special blocks, the layout, and the dense code packing.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/lowp.h"
#include "lowp/mx_reference.h"

namespace fixq {
namespace {

using mx_ref::get_bits;
using mx_ref::put_bits;
using mx_ref::reference_block;
using mx_ref::Spec;
using mx_ref::specs;

// Blocks at every scale, with zeros, subnormals, ties and clamped maxima in them.
std::vector<float> test_blocks(std::mt19937& rng, int64_t blocks) {
  std::vector<float> x(static_cast<size_t>(blocks * 32));
  for (int64_t b = 0; b < blocks; ++b) {
    const int e = static_cast<int>(rng() % 290) - 160;
    for (int64_t i = 0; i < 32; ++i) {
      float& v = x[static_cast<size_t>(b * 32 + i)];
      switch (rng() % 5) {
        case 0: v = 0.0f; break;
        case 1: v = std::ldexp(static_cast<float>(static_cast<int>(rng() % 512) - 256), e); break;
        case 2: v = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x00800000u)); break;
        default: v = std::ldexp(static_cast<float>(std::normal_distribution<double>(0, 1)(rng)), e); break;
      }
      if (b % 7 == 0 && i == 5) v = std::numeric_limits<float>::max();
      if (b % 11 == 0 && i == 9) v = -std::numeric_limits<float>::max();
    }
  }
  return x;
}

TEST(Mx, QuantizeMatchesTheSpecReference) {
  std::mt19937 rng(21);
  const std::vector<float> x = test_blocks(rng, 400);
  for (const Spec& s : specs()) {
    const int64_t bb = mx_info(s.type).block_bytes;
    ASSERT_EQ(bb, 1 + 32 * s.bits / 8);
    std::vector<uint8_t> q(static_cast<size_t>(bb * 400));
    mx_quantize(s.type, x.data(), static_cast<int64_t>(x.size()), q.data());
    for (int64_t b = 0; b < 400; ++b) {
      const auto want = reference_block(s, x.data() + b * 32);
      const std::vector<uint8_t> got(q.begin() + b * bb, q.begin() + (b + 1) * bb);
      ASSERT_EQ(got, want) << mx_info(s.type).name << " block " << b;
    }
  }
}

TEST(Mx, DequantizeIsTheSpecProductRoundedOnce) {
  std::mt19937 rng(22);
  for (const Spec& s : specs()) {
    const lowp_ref::Ref ref(s.element);
    const int64_t bb = mx_info(s.type).block_bytes;
    std::vector<uint8_t> q(static_cast<size_t>(bb * 200));
    for (uint8_t& v : q) v = static_cast<uint8_t>(rng());
    std::vector<float> x(200 * 32);
    mx_dequantize(s.type, q.data(), static_cast<int64_t>(x.size()), x.data());
    for (int64_t b = 0; b < 200; ++b) {
      const uint8_t* block = q.data() + b * bb;
      for (int i = 0; i < 32; ++i) {
        const float got = x[static_cast<size_t>(b * 32 + i)];
        const uint32_t code = get_bits(block, s.bits, i);
        double elem = s.type == MxType::Int8 ? static_cast<int8_t>(code) / 64.0 : ref.decode(code);
        if (block[0] == 0xFF) elem = std::numeric_limits<double>::quiet_NaN();
        const double want = elem * std::ldexp(1.0, block[0] - 127);  // exact in double
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << mx_info(s.type).name << " block " << b << " element " << i;
        } else {
          EXPECT_EQ(got, static_cast<float>(want)) << mx_info(s.type).name << " block " << b << " element " << i;
        }
      }
    }
  }
}

TEST(Mx, RequantizingDequantizedBlocksGivesTheSameBytes) {
  std::mt19937 rng(23);
  const std::vector<float> x = test_blocks(rng, 300);
  for (const Spec& s : specs()) {
    std::vector<uint8_t> q(static_cast<size_t>(mx_info(s.type).block_bytes * 300)), q2(q.size());
    std::vector<float> y(x.size());
    mx_quantize(s.type, x.data(), static_cast<int64_t>(x.size()), q.data());
    mx_dequantize(s.type, q.data(), static_cast<int64_t>(x.size()), y.data());
    mx_quantize(s.type, y.data(), static_cast<int64_t>(y.size()), q2.data());
    EXPECT_EQ(q, q2) << mx_info(s.type).name;
  }
}

TEST(Mx, SharedExponentIsFloorLog2AmaxMinusEmax) {
  EXPECT_EQ(mx_info(MxType::Fp8E4m3).emax, 8);
  EXPECT_EQ(mx_info(MxType::Fp8E5m2).emax, 15);
  EXPECT_EQ(mx_info(MxType::Fp6E2m3).emax, 2);
  EXPECT_EQ(mx_info(MxType::Fp6E3m2).emax, 4);
  EXPECT_EQ(mx_info(MxType::Fp4E2m1).emax, 2);
  EXPECT_EQ(mx_info(MxType::Int8).emax, 0);
  EXPECT_EQ(mx_shared_exponent(MxType::Fp8E4m3, 1.0f), -8);
  EXPECT_EQ(mx_shared_exponent(MxType::Fp8E4m3, 1.999f), -8);
  EXPECT_EQ(mx_shared_exponent(MxType::Fp4E2m1, 6.0f), 0);
  EXPECT_EQ(mx_shared_exponent(MxType::Int8, 0.75f), -1);
  EXPECT_EQ(mx_shared_exponent(MxType::Fp4E2m1, 0.0f), -127);          // log2(0) = -inf, clamped
  EXPECT_EQ(mx_shared_exponent(MxType::Fp4E2m1, 0x1p-140f), -127);     // clamped
  EXPECT_EQ(mx_shared_exponent(MxType::Int8, std::numeric_limits<float>::max()), 127);
  EXPECT_EQ(mx_shared_exponent(MxType::Fp8E5m2, std::numeric_limits<float>::max()), 112);
}

TEST(Mx, Mxfp4LayoutAndClampToMaxNormal) {
  std::vector<float> x(32, 0.0f);
  x[0] = 6.0f;   // amax 6: s = 0, code 0x7
  x[1] = -0.5f;  // e2m1 0x9
  x[2] = 7.0f;   // 7 > 6 = max normal: clamped to 6 (0x7), and amax 7 still gives s = 0
  x[31] = 1.0f;  // 0x2, the high nibble of byte 15
  std::vector<uint8_t> q(17);
  mx_quantize(MxType::Fp4E2m1, x.data(), 32, q.data());
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 0x7 | (0x9 << 4));
  EXPECT_EQ(q[2], 0x7);
  EXPECT_EQ(q[16], 0x2 << 4);
}

TEST(Mx, Mxint8ClampsSymmetrically) {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.999f;   // s = 0: 1.999 * 64 = 127.9 -> 127 (saturated)
  x[1] = -1.999f;  // -127.9 -> -127 (saturated: -max normal)
  x[2] = 0.5f / 64.0f;   // a tie: 0.5 -> 0
  x[3] = 1.5f / 64.0f;   // a tie: 1.5 -> 2
  std::vector<uint8_t> q(33);
  mx_quantize(MxType::Int8, x.data(), 32, q.data());
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(static_cast<int8_t>(q[1]), 127);
  EXPECT_EQ(static_cast<int8_t>(q[2]), -127);
  EXPECT_EQ(q[3], 0);
  EXPECT_EQ(q[4], 2);
}

TEST(Mx, NanOrInfinityMakesTheNanBlock) {
  for (const Spec& s : specs()) {
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()}) {
      std::vector<float> x(64, 1.0f);
      x[40] = bad;
      std::vector<uint8_t> q(static_cast<size_t>(2 * mx_info(s.type).block_bytes));
      mx_quantize(s.type, x.data(), 64, q.data());
      EXPECT_NE(q[0], 0xFF);  // the first block is unaffected
      EXPECT_EQ(q[static_cast<size_t>(mx_info(s.type).block_bytes)], 0xFF) << mx_info(s.type).name;
      std::vector<float> y(64);
      mx_dequantize(s.type, q.data(), 64, y.data());
      EXPECT_EQ(y[0], 1.0f);
      for (int i = 32; i < 64; ++i) EXPECT_TRUE(std::isnan(y[static_cast<size_t>(i)])) << mx_info(s.type).name;
    }
  }
}

TEST(Mx, NamesParseAndBadCountsAreErrors) {
  for (const Spec& s : specs()) EXPECT_EQ(parse_mx_type(mx_info(s.type).name), s.type);
  EXPECT_THROW(parse_mx_type("mxfp5"), Error);
  std::vector<float> x(40, 1.0f);
  std::vector<uint8_t> q(64);
  EXPECT_THROW(mx_quantize(MxType::Fp4E2m1, x.data(), 40, q.data()), Error);
  EXPECT_THROW(mx_dequantize(MxType::Fp4E2m1, q.data(), 33, x.data()), Error);
  EXPECT_THROW(mx_quantize(MxType::Fp4E2m1, x.data(), -32, q.data()), Error);
  EXPECT_THROW(mx_quantize(MxType::Fp4E2m1, nullptr, 32, q.data()), Error);
  EXPECT_THROW(mx_shared_exponent(MxType::Int8, std::numeric_limits<float>::infinity()), Error);
  EXPECT_THROW(mx_shared_exponent(MxType::Int8, -1.0f), Error);
  try {
    mx_quantize(MxType::Fp6E3m2, x.data(), 40, q.data());
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "mxfp6_e3m2 needs a multiple of 32 values, got 40");
  }
}

TEST(PackCodes, RoundTripsEveryLengthAndChecksItsInput) {
  std::mt19937 rng(24);
  for (const int bits : {2, 4, 6, 8}) {
    for (int64_t n = 0; n <= 41; ++n) {
      std::vector<uint8_t> codes(static_cast<size_t>(n));
      for (uint8_t& c : codes) c = static_cast<uint8_t>(rng() % (1u << bits));
      std::vector<uint8_t> packed(static_cast<size_t>(packed_code_bytes(bits, n)), 0xEE), back(codes.size());
      EXPECT_EQ(static_cast<int64_t>(packed.size()), (n * bits + 7) / 8);
      pack_codes(bits, codes.data(), n, packed.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(get_bits(packed.data() - 1, bits, static_cast<int>(i)), codes[static_cast<size_t>(i)]);
      unpack_codes(bits, packed.data(), n, back.data());
      EXPECT_EQ(back, codes) << bits << " bits, n = " << n;
      if ((n * bits) % 8 != 0) {
        packed.back() |= 0x80;  // an unused bit
        EXPECT_THROW(unpack_codes(bits, packed.data(), n, back.data()), Error) << bits << " bits, n = " << n;
      }
    }
  }
  const uint8_t too_wide[2] = {3, 16};
  uint8_t out[2];
  EXPECT_THROW(pack_codes(4, too_wide, 2, out), Error);
  EXPECT_THROW(pack_codes(5, too_wide, 2, out), Error);
  EXPECT_THROW(packed_code_bytes(7, 2), Error);
}

}  // namespace
}  // namespace fixq
