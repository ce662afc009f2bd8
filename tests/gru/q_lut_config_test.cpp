// Activation tables (exhaustive) and the GRU quantization config.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "fixq/error.h"
#include "fixq/qgru.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

QuantParams per_tensor(int bits, Symmetry sym, ScaleKind kind, float lo, float hi) {
  QuantScheme s;
  s.format = IntFormat::make(bits, true);
  s.symmetry = sym;
  s.scale_kind = kind;
  const Range r{lo, hi};
  return params_from_ranges(s, Shape{1}, std::span<const Range>(&r, 1));
}

double f(ActivationLut::Fn fn, double x) { return fn == ActivationLut::Fn::Sigmoid ? 1 / (1 + std::exp(-x)) : std::tanh(x); }

// Exactly rounded table entries for 8-bit inputs: checked against std::nearbyint (ties to
// even in the default mode), an implementation independent of fixq's helper.
TEST(ActivationLut, EightBitInputIsTheRoundedFunction) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  for (auto fn : {ActivationLut::Fn::Sigmoid, ActivationLut::Fn::Tanh})
    for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier})
      for (int out_bits : {8, 16}) {
        const QuantParams in = per_tensor(8, Symmetry::Asymmetric, kind, -6.0f, 5.0f);
        const QuantParams out = fn == ActivationLut::Fn::Sigmoid ? per_tensor(out_bits, Symmetry::Asymmetric, kind, 0.0f, 1.0f)
                                                                 : per_tensor(out_bits, Symmetry::Symmetric, kind, -1.0f, 1.0f);
        const ActivationLut lut = ActivationLut::build(fn, in, out);
        ASSERT_EQ(lut.entries(), 256u);
        const IntFormat fo = out.scheme.format;
        for (int q = -128; q <= 127; ++q) {
          const double x = (q - in.zero_point[0]) * static_cast<double>(in.scale[0]);
          const double want = std::nearbyint(f(fn, x) / out.scale[0]) + out.zero_point[0];
          ASSERT_EQ(lut(q), std::min<double>(std::max<double>(want, fo.qmin()), fo.qmax())) << q;
        }
      }
}

// 16-bit inputs: every one of the 65536 inputs within 1 LSB (8-bit output) or 2 LSB
// (16-bit output) of the exact function, for many random parameter pairs.
TEST(ActivationLut, SixteenBitInputWithinBoundExhaustively) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> width(0.5f, 20.0f), shift(-0.5f, 0.5f);
  int interpolated = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const auto fn = trial % 2 ? ActivationLut::Fn::Tanh : ActivationLut::Fn::Sigmoid;
    const ScaleKind kind = trial % 4 < 2 ? ScaleKind::PowerOfTwo : ScaleKind::Multiplier;
    const int out_bits = trial % 8 < 4 ? 16 : 8;
    const float w = width(rng), c = shift(rng) * w;
    const QuantParams in = per_tensor(16, Symmetry::Asymmetric, kind, c - w, c + w);
    const QuantParams out = fn == ActivationLut::Fn::Sigmoid ? per_tensor(out_bits, Symmetry::Asymmetric, kind, 0.0f, 1.0f)
                                                             : per_tensor(out_bits, Symmetry::Symmetric, kind, -1.0f, 1.0f);
    const ActivationLut lut = ActivationLut::build(fn, in, out);
    interpolated += lut.entries() < 65536;
    const double bound = out_bits == 8 ? 1.0 : 2.0;
    const IntFormat fo = out.scheme.format;
    for (int q = -32768; q <= 32767; ++q) {
      const double x = (q - in.zero_point[0]) * static_cast<double>(in.scale[0]);
      const double exact = std::min<double>(std::max<double>(f(fn, x) / out.scale[0] + out.zero_point[0], fo.qmin()), fo.qmax());
      ASSERT_LE(std::fabs(lut(q) - exact), bound) << "trial " << trial << " q " << q << " entries " << lut.entries();
    }
  }
  EXPECT_GT(interpolated, 12) << "the tables should usually interpolate, not store every input";
}

TEST(GruQuantConfig, ReadyConfigsAndJson) {
  const GruQuantConfig c8 = GruQuantConfig::int8(ScaleKind::PowerOfTwo);
  const GruQuantConfig c16 = GruQuantConfig::int16(ScaleKind::Multiplier);
  for (int i = 0; i < kGruOpCount; ++i) {
    const GruOp op = static_cast<GruOp>(i);
    EXPECT_EQ(c8.bits_of(op), 8);
    EXPECT_EQ(c16.bits_of(op), op == GruOp::W || op == GruOp::R ? 8 : 16) << to_string(op);
  }
  const GruQuantConfig back = GruQuantConfig::from_json(c16.to_json());
  EXPECT_EQ(back.bits, c16.bits);
  EXPECT_EQ(back.scale_kind, ScaleKind::Multiplier);
  const GruQuantConfig mixed = GruQuantConfig::from_json(R"({"version": 1, "base": "int8", "bits": {"g_pre": 16, "h": 16}})");
  EXPECT_EQ(mixed.bits_of(GruOp::GPre), 16);
  EXPECT_EQ(mixed.bits_of(GruOp::H), 16);
  EXPECT_EQ(mixed.bits_of(GruOp::ZPre), 8);
  EXPECT_EQ(mixed.scale_kind, ScaleKind::PowerOfTwo);
  expect_error([] { GruQuantConfig::from_json(R"({"version": 1, "bits": {"q_pre": 8}})"); }, "q_pre");
  expect_error([] { GruQuantConfig::from_json(R"({"version": 1, "bits": {"z_pre": 12}})"); }, "each operator is 8 or 16 bits");
  expect_error([] { GruQuantConfig::from_json(R"({"version": 1, "bias": 3})"); }, "unknown key 'bias'");
  expect_error([] { GruQuantConfig::from_json(R"({"version": 2})"); }, "version must be 1");
  expect_error([] { GruQuantConfig::from_json("{not json"); }, "not valid JSON");
  expect_error([] { GruQuantConfig::from_json(R"({"version": 1, "scales": "log"})"); }, "pow2 or multiplier");
  // "float", the quantization schemes' former name for multiplier scales, still reads; the
  // config writes the one spelling back.
  const GruQuantConfig old = GruQuantConfig::from_json(R"({"version": 1, "base": "int16", "scales": "float"})");
  EXPECT_EQ(old.scale_kind, ScaleKind::Multiplier);
  EXPECT_EQ(old.bits, c16.bits);
  EXPECT_NE(old.to_json().find(R"("scales": "multiplier")"), std::string::npos) << old.to_json();
  expect_error([] { GruQuantConfig::from_json(R"({"version": "1"})"); }, "version must be 1");
  expect_error([] { GruQuantConfig::from_json(R"({"version": 1, "base": 8})"); }, "wrong type");
}

TEST(GruQuantConfig, OperatorSchemesFollowTheSpecTable) {  // docs/spec.md 3.2
  const GruQuantConfig c = GruQuantConfig::int8(ScaleKind::PowerOfTwo);
  EXPECT_EQ(gru_op_scheme(GruOp::W, c).granularity, Granularity::PerChannel);
  EXPECT_EQ(gru_op_scheme(GruOp::W, c).symmetry, Symmetry::Symmetric);
  EXPECT_EQ(gru_op_scheme(GruOp::Br, c).symmetry, Symmetry::Symmetric);
  EXPECT_EQ(gru_op_scheme(GruOp::X, c).symmetry, Symmetry::Asymmetric);
  EXPECT_EQ(gru_op_scheme(GruOp::ZOut, c).symmetry, Symmetry::Asymmetric);
  EXPECT_EQ(gru_op_scheme(GruOp::GOut, c).symmetry, Symmetry::Symmetric);
  EXPECT_EQ(gru_op_scheme(GruOp::H, c).granularity, Granularity::PerTensor);
}

}  // namespace
}  // namespace fixq
