// The formula headers (fixq/host_device.h) instantiated on the host through the same probe
// function that tests/cuda/formulas_probe.cu compiles for the device: every output equals an
// independent oracle. The 128-bit oracle of the GRU (q_oracle.h) states A(rho, x) and the
// unit update from docs/spec.md; the tables are ActivationLut's own, tested exhaustively in
// q_lut_config_test.cpp; the epilogues are restated below in plain arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "cuda/formulas_probe.h"
#include "fixq/qgru.h"
#include "fixq/quant.h"
#include "gru/q_oracle.h"
#include "gru/int/plan.h"

namespace fixq {
namespace {

using detail::int128;

QuantParams per_tensor(int bits, float lo, float hi) {
  QuantScheme s;
  s.format = IntFormat::make(bits, true);
  const Range r{lo, hi};
  return params_from_ranges(s, Shape{1}, std::span<const Range>(&r, 1));
}

int64_t oracle_apply(const FixedPointScale& s, int64_t x) { return gru_oracle::apply({s.m, s.shift}, x); }

int64_t oracle_requantize(int64_t v, const FixedPointScale& s, int32_t zp, IntRange r) {
  const int64_t t = std::clamp<int64_t>(oracle_apply(s, v), -(int64_t{1} << 40), int64_t{1} << 40);
  return std::clamp<int64_t>(t + zp, r.qmin, r.qmax);
}

// Random but valid constants of one unit, over the tables given; `scales` per UnitScale.
struct Unit {
  gru_detail::UnitConstants c{};
  std::vector<int32_t> bias{7, -3, 11, -20};
};

TEST(FormulaHeaders, HostInstantiationEqualsTheOracles) {
  const ActivationLut sig8 = ActivationLut::build(ActivationLut::Fn::Sigmoid, per_tensor(8, -6, 6), per_tensor(8, 0, 1));
  const ActivationLut tanh16 =
      ActivationLut::build(ActivationLut::Fn::Tanh, per_tensor(16, -4, 4), per_tensor(16, -1, 1));
  ASSERT_TRUE(sig8.direct());
  ASSERT_FALSE(tanh16.direct());
  Unit u;
  for (int o = 0; o < gru_detail::kOperands; ++o) {
    u.c.zp[o] = (o * 37) % 19 - 9;
    u.c.range[o] = {-128, 127};
  }
  for (int s = 0; s < gru_detail::kUnitScales; ++s)
    u.c.ratio[s] = s % 2 ? FixedPointScale::pow2(s % 5) : FixedPointScale::from_real(0.37 + 0.11 * s);
  for (int l = 0; l < gru_detail::kUnitLuts; ++l) u.c.lut[l] = gru_detail::lut_view(sig8);
  for (int b = 0; b < gru_detail::kUnitBiases; ++b) {
    u.c.bias[b] = &u.bias[static_cast<size_t>(b)];
    u.c.bias_zp[b] = b - 2;
  }
  u.c.q_one = 127;
  const probe::Tables t{gru_detail::lut_view(sig8), gru_detail::lut_view(tanh16), u.c};

  // Spec 5.2 in exact int128 arithmetic over the same constants (the oracle's update_unit).
  const auto& c = u.c;
  auto sat = [&](gru_detail::Operand o, int128 v) {
    const IntRange r = c.range[static_cast<int>(o)];
    return static_cast<int32_t>(std::clamp<int128>(v, r.qmin, r.qmax));
  };
  auto A = [&](gru_detail::UnitScale s, int128 v) { return int128{oracle_apply(c.ratio[static_cast<int>(s)], static_cast<int64_t>(v))}; };
  auto zp = [&](gru_detail::Operand o) { return c.zp[static_cast<int>(o)]; };
  using O = gru_detail::Operand;
  using S = gru_detail::UnitScale;
  auto oracle_unit = [&](int32_t wz, int32_t wr, int32_t wg, int32_t hz, int32_t hr, int32_t hg, int32_t h) {
    const int32_t z_pre = sat(O::ZPre, A(S::WxToZ, wz - zp(O::Wx)) + A(S::RhToZ, hz - zp(O::Rh)) + u.bias[0] + c.bias_zp[0]);
    const int32_t r_pre = sat(O::RPre, A(S::WxToR, wr - zp(O::Wx)) + A(S::RhToR, hr - zp(O::Rh)) + u.bias[1] + c.bias_zp[1]);
    const int32_t z = sig8(z_pre), r = sig8(r_pre);
    const int32_t ab = sat(O::RhAddBr, A(S::RhToRhab, hg - zp(O::Rh)) + u.bias[2] + c.bias_zp[2]);
    const int32_t rrh = sat(O::RRh, A(S::RrhMul, int128{r - zp(O::ROut)} * (ab - zp(O::RhAddBr))) + zp(O::RRh));
    const int32_t g_pre = sat(O::GPre, A(S::WxToG, wg - zp(O::Wx)) + A(S::RrhToG, rrh - zp(O::RRh)) + u.bias[3] + c.bias_zp[3]);
    const int32_t g = sig8(g_pre);
    const int32_t old_c = sat(O::OldC, A(S::OldMul, int128{z - zp(O::ZOut)} * (h - zp(O::H))) + zp(O::OldC));
    const int32_t new_c = sat(O::NewC, A(S::NewMul, int128{c.q_one - z} * (g - zp(O::GOut))) + zp(O::NewC));
    return sat(O::H, A(S::OldToH, old_c - zp(O::OldC)) + A(S::NewToH, new_c - zp(O::NewC)) + zp(O::H));
  };

  for (uint64_t i = 0; i < 20000; ++i) {
    int64_t out[probe::kOutputs];
    probe::run_case(i, t, out);
    // The inputs run_case draws, drawn again.
    const uint64_t r0 = probe::mix(i), r1 = probe::mix(r0), r2 = probe::mix(r1), r3 = probe::mix(r2);
    const FixedPointScale s = probe::scale(r0);
    const int64_t x = probe::value(r1, 63);
    const IntRange range{-32768, 32767};
    const auto z = static_cast<int32_t>(probe::value(r2, 8));
    ASSERT_EQ(out[0], oracle_apply(s, x)) << i;
    ASSERT_EQ(out[1], oracle_requantize(x, s, z, range)) << i;
    ASSERT_EQ(out[2], oracle_requantize(probe::value(r2 >> 3, 32) - z, s, static_cast<int32_t>(probe::value(r3, 8)), range))
        << i;
    const int128 prod = int128{probe::value(r3, 32) - z} * (probe::value(r1 >> 5, 32) + z);
    const int64_t p64 = static_cast<int64_t>(std::clamp<int128>(prod, INT64_MIN, INT64_MAX));
    ASSERT_EQ(out[3], oracle_requantize(p64, s, 3, range)) << i;
    ASSERT_EQ(out[4], sig8(static_cast<int32_t>(probe::value(r1, 8)))) << i;
    ASSERT_EQ(out[5], tanh16(static_cast<int32_t>(probe::value(r2, 16)))) << i;
    const int64_t v = probe::value(r2, 47) - probe::value(r1, 9) * probe::value(r3, 40);
    const FixedPointScale rs = s.shift > 0 ? s : FixedPointScale{};
    ASSERT_EQ(out[6], oracle_requantize(v + probe::value(r0 >> 7, 31), rs, z, range)) << i;
    const float sa = 0x1p-7f * static_cast<float>(1 + (r1 & 255)), sb = 0x1p-9f * static_cast<float>(1 + (r2 & 255));
    volatile float prod_b = static_cast<float>(v) * sb;  // each operation rounded on its own
    volatile float prod_a = prod_b * sa;
    const float d = prod_a + static_cast<float>(probe::value(r3, 20));
    ASSERT_EQ(out[7], int64_t{std::bit_cast<uint32_t>(d)}) << i;
    auto q8 = [](uint64_t r) { return static_cast<int32_t>(probe::value(r, 8)); };
    ASSERT_EQ(out[8], oracle_unit(q8(r0), q8(r1), q8(r2), q8(r3), q8(r0 >> 11), q8(r1 >> 11), q8(r2 >> 11))) << i;
  }
}

}  // namespace
}  // namespace fixq
