// Every code of every type: decodes to the value its definition gives (reference.h), and
// encodes back to itself, NaN codes to the canonical NaN (fixq/lowp.h documents which), and
// under Saturate infinities to +-max. The type table agrees with the definitions.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fixq/lowp.h"
#include "reference.h"

namespace fixq {
namespace {

class EveryCode : public testing::TestWithParam<LowpType> {};

std::string type_name(const testing::TestParamInfo<LowpType>& info) { return std::string(lowp_info(info.param).name); }

std::vector<uint32_t> all_codes(LowpType t) {
  std::vector<uint32_t> v(size_t{1} << lowp_info(t).bits);
  for (size_t c = 0; c < v.size(); ++c) v[c] = static_cast<uint32_t>(c);
  return v;
}

// decode / encode through the public array functions of the right code width.
std::vector<float> decode_all(LowpType t, const std::vector<uint32_t>& codes) {
  std::vector<float> x(codes.size());
  if (lowp_info(t).bits == 16) {
    const std::vector<uint16_t> c(codes.begin(), codes.end());
    lowp_decode(t, c.data(), static_cast<int64_t>(c.size()), x.data());
  } else {
    const std::vector<uint8_t> c(codes.begin(), codes.end());
    lowp_decode(t, c.data(), static_cast<int64_t>(c.size()), x.data());
  }
  return x;
}

std::vector<uint32_t> encode_all(LowpType t, const std::vector<float>& x, Overflow o) {
  if (lowp_info(t).bits == 16) {
    std::vector<uint16_t> c(x.size());
    lowp_encode(t, x.data(), static_cast<int64_t>(x.size()), c.data(), o);
    return {c.begin(), c.end()};
  }
  std::vector<uint8_t> c(x.size());
  lowp_encode(t, x.data(), static_cast<int64_t>(x.size()), c.data(), o);
  return {c.begin(), c.end()};
}

TEST_P(EveryCode, DecodesToItsDefinedValue) {
  const LowpType t = GetParam();
  const lowp_ref::Ref ref(t);
  const auto codes = all_codes(t);
  const auto x = decode_all(t, codes);
  const int bits = lowp_info(t).bits;
  for (uint32_t c : codes) {
    const uint32_t got = std::bit_cast<uint32_t>(x[c]);
    const double want = ref.decode(c);
    if (std::isnan(want)) {
      const bool negative = t != LowpType::E8m0fnu && ((c >> (bits - 1)) & 1);
      uint32_t nan = (negative ? 0x80000000u : 0u) | 0x7FC00000u;
      if (t == LowpType::Bf16) nan = c << 16;                                                         // bit for bit
      if (t == LowpType::Fp16) nan = ((c & 0x8000u) << 16) | 0x7F800000u | ((c & 0x3FFu) << 13);  // bit for bit
      EXPECT_EQ(got, nan) << "code 0x" << std::hex << c;
    } else {
      EXPECT_EQ(got, std::bit_cast<uint32_t>(static_cast<float>(want))) << "code 0x" << std::hex << c;
      if (want == 0.0) {
        EXPECT_EQ(std::signbit(x[c]), std::signbit(want)) << "code 0x" << std::hex << c;
      }
    }
  }
}

TEST_P(EveryCode, ReencodesToItselfUpToNanCanonicalization) {
  const LowpType t = GetParam();
  const lowp_ref::Ref ref(t);
  const auto codes = all_codes(t);
  const auto x = decode_all(t, codes);
  const uint32_t sign_bit = t == LowpType::E8m0fnu ? 0u : 1u << (lowp_info(t).bits - 1);
  for (const Overflow o : {Overflow::Default, Overflow::Saturate}) {
    const auto back = encode_all(t, x, o);
    for (uint32_t c : codes) {
      uint32_t want = c;
      if (ref.is_nan_code(c)) want = ref.nan_code((c & sign_bit) != 0);
      if (o == Overflow::Saturate && std::isinf(x[c])) want = (c & sign_bit) | ref.max_mag();
      EXPECT_EQ(back[c], want) << (o == Overflow::Default ? "default" : "saturate") << " code 0x" << std::hex << c;
    }
  }
}

TEST_P(EveryCode, SingleValueFunctionsAgreeWithTheArrayOnes) {
  const LowpType t = GetParam();
  const auto codes = all_codes(t);
  const auto x = decode_all(t, codes);
  const auto back = encode_all(t, x, Overflow::Default);
  for (uint32_t c : codes) {
    EXPECT_EQ(std::bit_cast<uint32_t>(lowp_decode(t, static_cast<uint16_t>(c))), std::bit_cast<uint32_t>(x[c]));
    EXPECT_EQ(lowp_encode(t, x[c]), back[c]);
  }
}

TEST_P(EveryCode, InfoMatchesTheDefinition) {
  const LowpType t = GetParam();
  const LowpInfo& info = lowp_info(t);
  const lowp_ref::Def d = lowp_ref::def(t);
  const lowp_ref::Ref ref(t);
  EXPECT_EQ(parse_lowp_type(info.name), t);
  EXPECT_EQ(info.bits, d.bits);
  EXPECT_EQ(info.exponent_bits, d.ebits);
  EXPECT_EQ(info.mantissa_bits, d.mbits);
  EXPECT_EQ(info.bias, d.bias);
  EXPECT_EQ(info.has_inf, d.kind == lowp_ref::Kind::Ieee);
  EXPECT_EQ(info.has_nan, d.kind != lowp_ref::Kind::FiniteOnly);
  EXPECT_EQ(info.is_signed, d.kind != lowp_ref::Kind::E8m0);
  EXPECT_EQ(static_cast<double>(info.max), ref.decode(ref.max_mag()));
  EXPECT_EQ(static_cast<double>(info.min_positive), ref.decode(d.kind == lowp_ref::Kind::E8m0 ? 0 : 1));
}

TEST(LowpInfo, KnownMaxima) {
  EXPECT_EQ(lowp_info(LowpType::E4m3fn).max, 448.0f);
  EXPECT_EQ(lowp_info(LowpType::E4m3fnuz).max, 240.0f);
  EXPECT_EQ(lowp_info(LowpType::E5m2).max, 57344.0f);
  EXPECT_EQ(lowp_info(LowpType::E5m2fnuz).max, 57344.0f);
  EXPECT_EQ(lowp_info(LowpType::E8m0fnu).max, 0x1p127f);
  EXPECT_EQ(lowp_info(LowpType::E4m3b11fnuz).max, 30.0f);
  EXPECT_EQ(lowp_info(LowpType::E2m3fn).max, 7.5f);
  EXPECT_EQ(lowp_info(LowpType::E3m2fn).max, 28.0f);
  EXPECT_EQ(lowp_info(LowpType::E2m1fn).max, 6.0f);
  EXPECT_EQ(lowp_info(LowpType::Fp16).max, 65504.0f);
  EXPECT_EQ(lowp_info(LowpType::Bf16).max, std::bit_cast<float>(0x7F7F0000u));
  EXPECT_EQ(lowp_info(LowpType::E8m0fnu).min_positive, 0x1p-127f);
}

std::vector<LowpType> all_types() {
  std::vector<LowpType> v;
  for (int t = 0; t < kLowpTypeCount; ++t) v.push_back(static_cast<LowpType>(t));
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, EveryCode, testing::ValuesIn(all_types()), type_name);

}  // namespace
}  // namespace fixq
