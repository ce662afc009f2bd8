// The whole integer GRU network against the independent oracle of gru/q_oracle.h (written
// from docs/spec.md, sharing no code with CellPlan or the step loops): stacked layers and
// the layer-to-layer rescale, bidirectional runs, ragged lengths with some items of length
// 0 and T, given and default initial states, inputs far outside calibration, uniform and
// mixed widths, on every kernel path (the scalar reference and each fast family, native or
// emulated). The fast-path tests compare the paths with each other; this one holds every
// path to numbers computed without the library's step code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/qgru.h"
#include "gru/float_test_util.h"
#include "gru/q_oracle.h"
#include "support/kernel_paths.h"

namespace fixq {
namespace {

// Whether this build has lane kernels for the fast GRU step (src/gru/int/fast/registry.cpp:
// the x86-64 families only, so far).
constexpr bool kFastGruBuilt = std::string_view(FIXQ_TARGET_ARCH) == "x86_64";

std::vector<float> normal(int64_t n, uint32_t seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

struct Case {
  std::string name;
  int64_t C, H, layers;
  bool bidi;
  std::string config;  // a preset or a JSON config (docs/spec.md 3.2)
  ScaleKind scales;
};

GruQuantConfig config_of(const Case& c) {
  if (c.config == "int8") return GruQuantConfig::int8(c.scales);
  if (c.config == "int16") return GruQuantConfig::int16(c.scales);
  return GruQuantConfig::from_json(c.config);
}

GruQuantParams calibrate(const GruModel& m, const GruQuantConfig& cfg) {
  GruCalibrator cal(m, cfg, ObserverConfig{});
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> x = normal(10 * 4 * m.input_size, 30 + s, 1.0f);
    cal.observe(x.data(), Shape{10, 4, m.input_size});
  }
  return cal.finalize();
}

// Calibration gives a layer's input the range of the layer below's states, so that the
// rescale between them is often the identity (always for min/max pow2 unidirectional).
// Coarser, shifted input parameters for every layer above the first make it a real one;
// they are as valid as calibrated ones (both cells of a layer keep the same x).
void move_layer_inputs(GruQuantParams& p, int D) {
  for (size_t c = static_cast<size_t>(D); c < p.cells.size(); ++c) {
    QuantParams& x = p.cells[c][GruOp::X];
    if (p.config.scale_kind == ScaleKind::PowerOfTwo) {
      x.scale[0] *= 2.0f;
      x.exponent[0] -= 1;
    } else {
      x.scale[0] *= 1.37f;
    }
    x.zero_point[0] = std::min(x.zero_point[0] + 3, x.scheme.format.qmax());
  }
}

size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

class NetworkOracle : public ::testing::TestWithParam<Case> {};

TEST_P(NetworkOracle, EveryPathEqualsTheSpecBitForBit) {
  const Case& c = GetParam();
  const GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, c.bidi, 17);
  const int D = m.directions();
  GruQuantParams p = calibrate(m, config_of(c));
  move_layer_inputs(p, D);
  const QuantizedGru q(m, p);
  // The fast loop must really run on the fast paths, or they would only repeat the reference.
  if (!kFastGruBuilt) GTEST_SKIP() << "the fast GRU step has lane kernels on x86-64 only; this " FIXQ_TARGET_ARCH " build runs the reference loop, which the reference and oracle tests check";
  for (bool v : q.vectorized_cells()) ASSERT_TRUE(v) << c.name << ": a cell has no fast plan";
  // A layer boundary where h and the next x differ, so that the rescale is not the identity.
  bool rescaled = c.layers == 1;
  for (int64_t l = 0; l + 1 < c.layers; ++l)
    for (int d = 0; d < D; ++d) {
      const QuantParams& h = p.cells[static_cast<size_t>(l * D + d)][GruOp::H];
      const QuantParams& x = p.cells[static_cast<size_t>((l + 1) * D)][GruOp::X];
      rescaled |= h.scale[0] != x.scale[0] || h.zero_point[0] != x.zero_point[0] ||
                  h.scheme.format.bits != x.scheme.format.bits;
    }
  ASSERT_TRUE(rescaled) << c.name << ": every layer boundary is the identity; the test would not see the rescale";

  const int64_t T = 9;
  for (int64_t B : {1, 5}) {
    std::vector<int64_t> lengths;
    if (B > 1) lengths = {T, 3, 0, 1, 7};  // ragged, unsorted, one empty and one full
    for (float sigma : {1.0f, 40.0f})      // 40: far outside calibration, every operator saturates
      for (bool with_h0 : {false, true}) {
        const std::vector<float> x = normal(T * B * c.C, 70 + static_cast<uint32_t>(B), sigma);
        const std::vector<float> h0 = normal(c.layers * D * B * c.H, 9, sigma);
        GruRunOptions opt;
        opt.lengths = lengths;
        opt.h0 = with_h0 ? h0.data() : nullptr;
        const GruOutput want = gru_oracle::forward(m, p, x.data(), T, B, lengths, opt.h0);
        for (const test::KernelPath& path : test::kernel_paths()) {
          test::PathScope scope(path);
          const GruOutput got = q.forward(x.data(), Shape{T, B, c.C}, opt);
          const std::string what = c.name + " " + path.name() + " B=" + std::to_string(B) +
                                   " sigma=" + std::to_string(sigma) + (with_h0 ? " h0" : "");
          ASSERT_EQ(got.y.size(), want.y.size()) << what;
          ASSERT_EQ(got.h_n.size(), want.h_n.size()) << what;
          EXPECT_EQ(differing(got.y, want.y), 0u) << what << ": y differs from the oracle";
          EXPECT_EQ(differing(got.h_n, want.h_n), 0u) << what << ": h_n differs from the oracle";
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, NetworkOracle,
    ::testing::Values(
        Case{"int8_pow2_2layers_bidir", 13, 24, 2, true, "int8", ScaleKind::PowerOfTwo},
        Case{"int8_multiplier_2layers_bidir", 13, 24, 2, true, "int8", ScaleKind::Multiplier},
        Case{"int16_pow2_2layers_bidir", 13, 21, 2, true, "int16", ScaleKind::PowerOfTwo},
        Case{"int16_multiplier_3layers", 7, 21, 3, false, "int16", ScaleKind::Multiplier},
        // The rescale between widths: an 8-bit state into a 16-bit layer input, and back.
        Case{"mixed_x16_multiplier_bidir", 13, 24, 2, true,
             R"({"version": 1, "base": "int8", "scales": "multiplier", "bits": {"x": 16, "g_pre": 16}})", ScaleKind::Multiplier},
        Case{"mixed_h16_pow2_3layers_bidir", 5, 16, 3, true,
             R"({"version": 1, "base": "int8", "scales": "pow2", "bits": {"h": 16, "new_contrib": 16}})",
             ScaleKind::PowerOfTwo}),
    [](const auto& info) { return info.param.name; });

// The oracle's own primitives against the worked values of docs/spec.md 2.1 and 2.3: a test
// of the tests, so that a wrong oracle cannot agree with a wrong library by accident.
TEST(NetworkOracle, PrimitivesFollowTheSpec) {
  using gru_oracle::apply;
  using gru_oracle::ratio;
  // 2.1 RSHR half up: -1.5 -> -1, -0.5 -> 0, 0.5 -> 1, 1.5 -> 2, -2.5 -> -2.
  const gru_oracle::Ratio half = ratio(0.5, ScaleKind::PowerOfTwo);
  EXPECT_EQ(half.m, 1);
  EXPECT_EQ(half.shift, 1);
  EXPECT_EQ(apply(half, -3), -1);
  EXPECT_EQ(apply(half, -1), 0);
  EXPECT_EQ(apply(half, 1), 1);
  EXPECT_EQ(apply(half, 3), 2);
  EXPECT_EQ(apply(half, -5), -2);
  // 2.3 from_real: 2^30 <= m < 2^31, m 2^-shift within 2^-(shift+1) of σ; σ rounding up to 1
  // renormalises.
  for (double sigma : {0.3, 1.0, 0.75, 1e-9, 1000.0, 1.0 - 0x1p-40}) {
    const gru_oracle::Ratio r = ratio(sigma, ScaleKind::Multiplier);
    EXPECT_GE(r.m, int64_t{1} << 30) << sigma;
    EXPECT_LT(r.m, int64_t{1} << 31) << sigma;
    EXPECT_LE(std::abs(std::ldexp(static_cast<double>(r.m), -r.shift) - sigma), std::ldexp(1.0, -(r.shift + 1))) << sigma;
  }
  EXPECT_EQ(ratio(1.0 - 0x1p-40, ScaleKind::Multiplier).m, int64_t{1} << 30);
  // Left shifts are exact and saturate at int64.
  const gru_oracle::Ratio eight = ratio(8.0, ScaleKind::PowerOfTwo);
  EXPECT_EQ(eight.shift, -3);
  EXPECT_EQ(apply(eight, -7), -56);
  EXPECT_EQ(apply(eight, int64_t{1} << 62), INT64_MAX);
  // 3.1 quantize: half to even after one binary32 division, then saturated.
  EXPECT_EQ(gru_oracle::quantize_value(2.5f, 1.0f, 0, -128, 127), 2);
  EXPECT_EQ(gru_oracle::quantize_value(3.5f, 1.0f, 0, -128, 127), 4);
  EXPECT_EQ(gru_oracle::quantize_value(-1000.0f, 0.5f, 3, -128, 127), -128);
}

}  // namespace
}  // namespace fixq
