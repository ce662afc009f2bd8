// The reset-before GRU cell (fixq/gru.h GruCellKind::ResetBefore, docs/spec.md 5.4) on every
// path it has: the float GRU against an independent binary64 implementation of the ONNX
// operator's equations (linear_before_reset = 0); the integer GRU against the 128-bit
// oracle written from the spec (gru/q_oracle.h), on every kernel path (native and SIMDe);
// integers within stated bounds of float; streaming equal to whole sequences; the .fixq
// file (version 3) and the paths that refuse the cell.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <unistd.h>
#include <random>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/export.h"
#include "fixq/gru.h"
#include "fixq/gru_ptq.h"
#include "fixq/qgru.h"
#include "fixq/safetensors.h"
#include "gru/float_test_util.h"
#include "gru/q_oracle.h"
#include "support/kernel_paths.h"

namespace fixq {
namespace {

std::vector<float> normal(int64_t n, uint32_t seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

GruModel reset_before_model(int64_t C, int64_t H, int64_t layers, bool bidi, uint32_t seed, float gain = 1.0f) {
  GruModel m = gru_test::torch_init_model(C, H, layers, bidi, seed, gain);
  m.cell_kind = GruCellKind::ResetBefore;
  return m;
}

size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// ONNX GRU (opset 14 operator text), linear_before_reset = 0, in binary64, written from
// the equations and not from fixq: zt = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz), rt likewise,
// ht = g(Xt Wh^T + (rt (.) Ht-1) Rh^T + Rbh + Wbh), Ht = (1 - zt) (.) ht + zt (.) Ht-1.
// Gates z, r, h are rows [0, H), [H, 2H), [2H, 3H) of W, R and the biases, fixq's order.
// Layers, directions, lengths and outputs as fixq/gru.h says (the reverse direction of an
// item starts at its last real step; padding outputs 0).
GruOutput onnx_reference(const GruModel& m, const std::vector<float>& x, int64_t T, int64_t B,
                         const std::vector<int64_t>& lengths) {
  const int64_t H = m.hidden_size, D = m.directions();
  std::vector<double> in(x.begin(), x.end());
  int64_t width = m.input_size;
  GruOutput out;
  for (int64_t l = 0; l < m.num_layers; ++l) {
    std::vector<double> y(static_cast<size_t>(T * B * D * H), 0.0);
    for (int64_t d = 0; d < D; ++d) {
      const GruCell& c = m.cell(static_cast<int>(l), static_cast<int>(d));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t len = lengths.empty() ? T : lengths[static_cast<size_t>(b)];
        std::vector<double> h(static_cast<size_t>(H), 0.0), rh(static_cast<size_t>(H));
        for (int64_t i = 0; i < len; ++i) {
          const int64_t t = d == 1 ? len - 1 - i : i;
          const double* xt = in.data() + (t * B + b) * width;
          auto wx = [&](int64_t row) {
            double s = c.bx[static_cast<size_t>(row)];
            for (int64_t k = 0; k < width; ++k) s += double{c.W[static_cast<size_t>(row * width + k)]} * xt[k];
            return s;
          };
          auto rdot = [&](int64_t row, const std::vector<double>& v) {
            double s = c.br[static_cast<size_t>(row)];
            for (int64_t k = 0; k < H; ++k) s += double{c.R[static_cast<size_t>(row * H + k)]} * v[static_cast<size_t>(k)];
            return s;
          };
          std::vector<double> z(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[static_cast<size_t>(j)] = sigmoid(wx(j) + rdot(j, h));
            rh[static_cast<size_t>(j)] = sigmoid(wx(H + j) + rdot(H + j, h)) * h[static_cast<size_t>(j)];
          }
          std::vector<double> hn(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            const double g = std::tanh(wx(2 * H + j) + rdot(2 * H + j, rh));
            const double zj = z[static_cast<size_t>(j)];
            hn[static_cast<size_t>(j)] = (1.0 - zj) * g + zj * h[static_cast<size_t>(j)];
          }
          h = hn;
          for (int64_t j = 0; j < H; ++j) y[static_cast<size_t>((t * B + b) * D * H + d * H + j)] = h[static_cast<size_t>(j)];
        }
        for (double v : h) out.h_n.push_back(static_cast<float>(v));
      }
    }
    // h_n is [L*D, B, H]: the loop above pushed cell by cell, item by item.
    in = y;
    width = D * H;
  }
  out.y.assign(in.begin(), in.end());
  return out;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) ab += double{a[i]} * b[i], aa += double{a[i]} * a[i], bb += double{b[i]} * b[i];
  return ab / std::sqrt(aa * bb);
}

TEST(ResetBeforeFloat, EqualsTheOnnxEquationsOnEveryPath) {
  const int64_t T = 7;
  for (bool bidi : {false, true}) {
    const GruModel m = reset_before_model(5, 19, 2, bidi, 3, 2.0f);
    for (int64_t B : {1, 4}) {
      std::vector<int64_t> lengths;
      if (B > 1) lengths = {T, 2, 0, 5};
      const std::vector<float> x = normal(T * B * 5, 11, 1.5f);
      const GruOutput want = onnx_reference(m, x, T, B, lengths);
      GruRunOptions opt;
      opt.lengths = lengths;
      // The reset-after cell on the same weights is far from it: the test tells the cells apart.
      GruModel after = m;
      after.cell_kind = GruCellKind::ResetAfter;
      EXPECT_GT(max_abs_diff(gru_forward(after, x.data(), Shape{T, B, 5}, opt).y, want.y), 1e-2f);
      const GruOutput first = gru_forward(m, x.data(), Shape{T, B, 5}, opt);
      for (const test::KernelPath& path : test::kernel_paths()) {
        test::PathScope scope(path);
        const GruOutput got = gru_forward(m, x.data(), Shape{T, B, 5}, opt);
        const std::string what = std::string(bidi ? "bidi" : "uni") + " B=" + std::to_string(B) + " " + path.name();
        ASSERT_EQ(got.y.size(), want.y.size()) << what;
        ASSERT_EQ(got.h_n.size(), want.h_n.size()) << what;
        // float32 sums of 19..38 products against binary64: a few ulps of values near 1.
        EXPECT_LT(max_abs_diff(got.y, want.y), 2e-5f) << what;
        EXPECT_LT(max_abs_diff(got.h_n, want.h_n), 2e-5f) << what;
        EXPECT_EQ(differing(got.y, first.y), 0u) << what << ": paths differ";
        EXPECT_EQ(differing(FloatGru(m).forward(x.data(), Shape{T, B, 5}, opt).y, first.y), 0u) << what;
      }
    }
  }
}

TEST(ResetBeforeFloat, StreamEqualsTheWholeSequence) {
  const GruModel m = reset_before_model(6, 17, 2, false, 8);
  const int64_t T = 5, B = 3;
  const std::vector<float> x = normal(T * B * 6, 2, 1.0f);
  const GruOutput whole = gru_forward(m, x.data(), Shape{T, B, 6});
  GruStream s(m, B);
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<float> h = s.step(x.data() + t * B * 6);
    const std::vector<float> want(whole.y.begin() + t * B * 17, whole.y.begin() + (t + 1) * B * 17);
    EXPECT_EQ(differing(h, want), 0u) << "t=" << t;
  }
}

TEST(ResetBeforeFloat, TapReportsOnlyTheOperatorsTheCellHas) {
  const GruModel m = reset_before_model(3, 8, 1, false, 1);
  std::vector<int> seen(kGruOpCount, 0);
  GruTap tap;
  tap.on_value = [&](int, int, int64_t, GruOp op, const float*, const Shape&) { ++seen[static_cast<size_t>(op)]; };
  GruRunOptions opt;
  opt.tap = &tap;
  const std::vector<float> x = normal(4 * 3, 5, 1.0f);
  gru_forward(m, x.data(), Shape{4, 1, 3}, opt);
  for (int i = 0; i < kGruOpCount; ++i) {
    const GruOp op = static_cast<GruOp>(i);
    const bool param = op == GruOp::W || op == GruOp::R || op == GruOp::Bx || op == GruOp::Br;
    EXPECT_EQ(seen[static_cast<size_t>(i)], param || !gru_op_used(op, m.cell_kind) ? 0 : 4) << to_string(op);
  }
}

GruQuantParams calibrate(const GruModel& m, const GruQuantConfig& cfg) {
  GruCalibrator cal(m, cfg, ObserverConfig{});
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> x = normal(10 * 4 * m.input_size, 30 + s, 1.0f);
    cal.observe(x.data(), Shape{10, 4, m.input_size});
  }
  return cal.finalize();
}

struct Case {
  std::string name;
  int64_t C, H, layers;
  bool bidi;
  std::string config;
  ScaleKind scales;
};

GruQuantConfig config_of(const Case& c) {
  if (c.config == "int8") return GruQuantConfig::int8(c.scales);
  if (c.config == "int16") return GruQuantConfig::int16(c.scales);
  return GruQuantConfig::from_json(c.config);
}

class ResetBeforeOracle : public ::testing::TestWithParam<Case> {};

TEST_P(ResetBeforeOracle, EveryPathEqualsTheSpecBitForBit) {
  const Case& c = GetParam();
  const GruModel m = reset_before_model(c.C, c.H, c.layers, c.bidi, 17);
  const int D = m.directions();
  const GruQuantParams p = calibrate(m, config_of(c));
  const QuantizedGru q(m, p);
  ASSERT_EQ(q.cell_kind(), GruCellKind::ResetBefore);
  GruModel after = m;
  after.cell_kind = GruCellKind::ResetAfter;
  const int64_t T = 9;
  for (int64_t B : {1, 5}) {
    std::vector<int64_t> lengths;
    if (B > 1) lengths = {T, 3, 0, 1, 7};
    for (float sigma : {1.0f, 40.0f})  // 40: far outside calibration, every operator saturates
      for (bool with_h0 : {false, true}) {
        const std::vector<float> x = normal(T * B * c.C, 70 + static_cast<uint32_t>(B), sigma);
        const std::vector<float> h0 = normal(c.layers * D * B * c.H, 9, sigma);
        GruRunOptions opt;
        opt.lengths = lengths;
        opt.h0 = with_h0 ? h0.data() : nullptr;
        const GruOutput want = gru_oracle::forward(m, p, x.data(), T, B, lengths, opt.h0);
        const std::string base = c.name + " B=" + std::to_string(B) + " sigma=" + std::to_string(sigma) + (with_h0 ? " h0" : "");
        // The oracle tells the cells apart on these inputs (else agreement would prove little).
        if (sigma == 1.0f) {
          EXPECT_GT(differing(gru_oracle::forward(after, p, x.data(), T, B, lengths, opt.h0).y, want.y), 0u) << base;
        }
        for (const test::KernelPath& path : test::kernel_paths()) {
          test::PathScope scope(path);
          const GruOutput got = q.forward(x.data(), Shape{T, B, c.C}, opt);
          const std::string what = base + " " + path.name();
          ASSERT_EQ(got.y.size(), want.y.size()) << what;
          EXPECT_EQ(differing(got.y, want.y), 0u) << what << ": y differs from the oracle";
          EXPECT_EQ(differing(got.h_n, want.h_n), 0u) << what << ": h_n differs from the oracle";
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, ResetBeforeOracle,
    ::testing::Values(Case{"int8_pow2_2layers_bidir", 13, 24, 2, true, "int8", ScaleKind::PowerOfTwo},
                      Case{"int8_multiplier_2layers_bidir", 13, 24, 2, true, "int8", ScaleKind::Multiplier},
                      Case{"int16_pow2_2layers", 7, 21, 2, false, "int16", ScaleKind::PowerOfTwo},
                      Case{"int16_multiplier_2layers_bidir", 13, 21, 2, true, "int16", ScaleKind::Multiplier},
                      Case{"mixed_h16_pow2", 5, 16, 2, false,
                           R"({"version": 1, "base": "int8", "scales": "pow2", "bits": {"h": 16, "g_pre": 16}})",
                           ScaleKind::PowerOfTwo}),
    [](const auto& info) { return info.param.name; });

// Integers within stated bounds of float on inputs like the calibration's: output cosine
// at least 0.999 for int16 and 0.99 for int8 (the reset-after cell's demo figures are
// 0.99997 and 0.9986), every path the same integers.
TEST(ResetBeforeQuantized, StaysCloseToFloat) {
  const GruModel m = reset_before_model(12, 32, 2, false, 4);
  const int64_t T = 20, B = 4;
  const std::vector<float> x = normal(T * B * 12, 99, 1.0f);
  const GruOutput ref = gru_forward(m, x.data(), Shape{T, B, 12});
  for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
    const QuantizedGru q16(m, calibrate(m, GruQuantConfig::int16(kind)));
    const QuantizedGru q8(m, calibrate(m, GruQuantConfig::int8(kind)));
    EXPECT_GT(cosine(q16.forward(x.data(), Shape{T, B, 12}).y, ref.y), 0.999) << to_string(kind);
    EXPECT_GT(cosine(q8.forward(x.data(), Shape{T, B, 12}).y, ref.y), 0.99) << to_string(kind);
  }
}

TEST(ResetBeforeQuantized, PtqKeepsTheCellAndItsQuality) {
  const GruModel m = reset_before_model(12, 32, 1, false, 6);
  GruPtq ptq(m);
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> x = normal(12 * 4 * 12, 40 + s, 1.0f);
    ptq.observe(x.data(), Shape{12, 4, 12});
  }
  const GruPtqResult r = ptq.quantize(GruQuantConfig::int8(ScaleKind::PowerOfTwo));
  EXPECT_EQ(r.model.cell_kind, GruCellKind::ResetBefore);
  const QuantizedGru q(r.model, r.params);
  const std::vector<float> x = normal(20 * 2 * 12, 7, 1.0f);
  const GruOutput ref = gru_forward(m, x.data(), Shape{20, 2, 12});
  EXPECT_GT(cosine(q.forward(x.data(), Shape{20, 2, 12}).y, ref.y), 0.995);
  EXPECT_EQ(differing(q.forward(x.data(), Shape{20, 2, 12}).y, gru_oracle::forward(r.model, r.params, x.data(), 20, 2).y), 0u);
}

TEST(ResetBeforeQuantized, StreamEqualsForward) {
  const GruModel m = reset_before_model(6, 17, 2, false, 8);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::Multiplier)));
  const int64_t T = 6, B = 2;
  const std::vector<float> x = normal(T * B * 6, 3, 1.0f);
  const GruOutput whole = q.forward(x.data(), Shape{T, B, 6});
  QuantizedGruStream s(q, B);
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<float> h = s.step(x.data() + t * B * 6);
    EXPECT_EQ(differing(h, std::vector<float>(whole.y.begin() + t * B * 17, whole.y.begin() + (t + 1) * B * 17)), 0u);
  }
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("fixq_rb_" + std::to_string(::getpid()) + "_" + name)).string();
}

// The file with its metadata replaced (tensors as they were).
void rewrite_metadata(const std::string& from, const std::string& to, const std::map<std::string, std::string>& changes,
                      const std::vector<std::string>& drop = {}) {
  const SafetensorsFile f(from);
  std::map<std::string, std::string> meta = f.metadata();
  for (const auto& [k, v] : changes) meta[k] = v;
  for (const std::string& k : drop) meta.erase(k);
  std::vector<std::vector<std::byte>> bufs;
  std::vector<SafetensorsTensorView> views;
  for (const SafetensorsTensorInfo& t : f.tensors()) {
    bufs.push_back(f.read_raw(t.name));
    views.push_back({t.name, t.dtype, t.shape, bufs.back()});
  }
  save_safetensors(to, views, meta);
}

TEST(ResetBeforeFile, SavesAsVersion3AndLoadsBitForBit) {
  const GruModel m = reset_before_model(5, 12, 2, true, 2);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
  const std::string path = temp_path("rb.fixq"), bad = temp_path("bad.fixq");
  q.save(path);
  {
    const SafetensorsFile f(path);
    EXPECT_EQ(f.metadata().at("fixq.version"), "3");
    EXPECT_EQ(f.metadata().at("cell"), "reset_before");
  }
  const QuantizedGru back = QuantizedGru::load(path);
  EXPECT_EQ(back.cell_kind(), GruCellKind::ResetBefore);
  const std::vector<float> x = normal(6 * 2 * 5, 1, 1.0f);
  EXPECT_EQ(differing(back.forward(x.data(), Shape{6, 2, 5}).y, q.forward(x.data(), Shape{6, 2, 5}).y), 0u);
  // A reset-after model stays version 2, with no cell key (its bytes unchanged).
  GruModel after = m;
  after.cell_kind = GruCellKind::ResetAfter;
  QuantizedGru(after, back.params()).save(bad);
  {
    const SafetensorsFile f(bad);
    EXPECT_EQ(f.metadata().at("fixq.version"), "2");
    EXPECT_EQ(f.metadata().count("cell"), 0u);
  }
  // A version 2 file that names a cell, and a version 3 file that does not, are refused.
  rewrite_metadata(path, bad, {{"fixq.version", "2"}});
  EXPECT_THROW(QuantizedGru::load(bad), Error);
  rewrite_metadata(path, bad, {}, {"cell"});
  EXPECT_THROW(QuantizedGru::load(bad), Error);
  rewrite_metadata(path, bad, {{"cell", "lstm"}});
  try {
    QuantizedGru::load(bad);
    ADD_FAILURE() << "an unknown cell loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reset_after, reset_before"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  std::filesystem::remove(bad);
}

TEST(ResetBeforeRefused, WhereTheCellCannotRun) {
  const GruModel m = reset_before_model(4, 8, 1, false, 2);
  EXPECT_THROW(gru_to_torch(m), Error);
  EXPECT_THROW(save_gru_float(temp_path("f.safetensors"), m), Error);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
  try {
    export_gru_c(q, CExportOptions{});
    ADD_FAILURE() << "export-c wrote a reset-before model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reset_before"), std::string::npos) << e.what();
  }
}

TEST(ResetBeforeNames, OneSpellingEach) {
  EXPECT_EQ(to_string(GruCellKind::ResetAfter), "reset_after");
  EXPECT_EQ(to_string(GruCellKind::ResetBefore), "reset_before");
  EXPECT_EQ(parse_gru_cell_kind("reset_before"), GruCellKind::ResetBefore);
  EXPECT_THROW(parse_gru_cell_kind("linear_before_reset"), Error);
  EXPECT_FALSE(gru_op_used(GruOp::RRh, GruCellKind::ResetBefore));
  EXPECT_FALSE(gru_op_used(GruOp::RhAddBr, GruCellKind::ResetBefore));
  EXPECT_TRUE(gru_op_used(GruOp::GPre, GruCellKind::ResetBefore));
  EXPECT_TRUE(gru_op_used(GruOp::RRh, GruCellKind::ResetAfter));
}

}  // namespace
}  // namespace fixq
