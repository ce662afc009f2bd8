// The integer GRU: bit-exact against an independent integer oracle written from the
// formulas of fixq/qgru.h, accuracy against the float GRU on random-weight models, and
// batching, lengths, files and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "arith/int128.h"
#include "fixq/error.h"
#include "fixq/metrics.h"
#include "fixq/qgru.h"
#include "gru/float_test_util.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

using detail::int128;


std::vector<float> random_input(int64_t T, int64_t B, int64_t C, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(T * B * C));
  for (float& v : x) v = n(rng);
  return x;
}

GruQuantParams calibrate(const GruModel& m, const GruQuantConfig& cfg, CalibMethod method, int64_t T, int64_t B) {
  ObserverConfig oc;
  oc.method = method;
  GruCalibrator cal(m, cfg, oc);
  for (uint32_t s = 0; s < 4; ++s) {
    const std::vector<float> x = random_input(T, B, m.input_size, 100 + s);
    cal.observe(x.data(), Shape{T, B, m.input_size});
  }
  return cal.finalize();
}

// ---- the independent oracle -----------------------------------------------------------

int64_t rhu(int128 v, const FixedPointScale& s) {  // round half up of v * m / 2^shift
  const int128 p = v * s.m;
  if (s.shift <= 0) return static_cast<int64_t>(p << -s.shift);
  return static_cast<int64_t>((p + (int128{1} << (s.shift - 1))) >> s.shift);
}

struct Q {
  double s;
  int32_t z, lo, hi;
};

Q q_of(const QuantParams& p, size_t i = 0) {
  return {p.scale[i], p.zero_point[i], p.scheme.format.qmin(), p.scheme.format.qmax()};
}

FixedPointScale ratio(double sigma, ScaleKind k) {
  return make_scale(sigma, k);
}

int32_t clampq(int64_t v, const Q& q) { return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, q.lo), q.hi)); }

// One cell over the whole sequence, unidirectional, batch 1, straight from the formulas.
std::vector<int32_t> oracle_cell(const GruCell& cell, const GruCellParams& p, ScaleKind k, const std::vector<int32_t>& qx,
                                 int64_t T) {
  const int64_t C = cell.input_size, H = cell.hidden_size;
  auto qw = [&](const std::vector<float>& w, GruOp op) {
    std::vector<int32_t> q(w.size());
    quantize(w.data(), Shape{3 * H, static_cast<int64_t>(w.size()) / (3 * H)}, p[op], q.data());
    return q;
  };
  const std::vector<int32_t> W = qw(cell.W, GruOp::W), R = qw(cell.R, GruOp::R), bx = qw(cell.bx, GruOp::Bx), br = qw(cell.br, GruOp::Br);
  const Q x = q_of(p[GruOp::X]), h = q_of(p[GruOp::H]), wx = q_of(p[GruOp::Wx]), rh = q_of(p[GruOp::Rh]);
  const Q zp = q_of(p[GruOp::ZPre]), rp = q_of(p[GruOp::RPre]), gp = q_of(p[GruOp::GPre]);
  const Q zo = q_of(p[GruOp::ZOut]), ro = q_of(p[GruOp::ROut]), go = q_of(p[GruOp::GOut]);
  const Q ab = q_of(p[GruOp::RhAddBr]), rr = q_of(p[GruOp::RRh]), oc = q_of(p[GruOp::OldContrib]), nc = q_of(p[GruOp::NewContrib]);
  const ActivationLut sz = ActivationLut::build(ActivationLut::Fn::Sigmoid, p[GruOp::ZPre], p[GruOp::ZOut]);
  const ActivationLut sr = ActivationLut::build(ActivationLut::Fn::Sigmoid, p[GruOp::RPre], p[GruOp::ROut]);
  const ActivationLut tg = ActivationLut::build(ActivationLut::Fn::Tanh, p[GruOp::GPre], p[GruOp::GOut]);
  auto bias = [&](int32_t q, double s, double target) {
    const double sigma = s / target;
    return sigma < FixedPointScale::kMinReal && k == ScaleKind::Multiplier ? 0 : rhu(q, ratio(sigma, k));
  };
  std::vector<int32_t> hq(static_cast<size_t>(H), h.z), y;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int32_t> qwx(static_cast<size_t>(3 * H)), qrh(static_cast<size_t>(3 * H));
    for (int64_t j = 0; j < 3 * H; ++j) {
      int128 aw = 0, ar = 0, sw = 0, sr = 0;
      for (int64_t c = 0; c < C; ++c) aw += int128{W[j * C + c]} * qx[t * C + c], sw += W[j * C + c];
      for (int64_t c = 0; c < H; ++c) ar += int128{R[j * H + c]} * hq[c], sr += R[j * H + c];
      qwx[j] = clampq(rhu(aw - x.z * sw, ratio(double{p[GruOp::W].scale[j]} * x.s / wx.s, k)) + wx.z, wx);
      qrh[j] = clampq(rhu(ar - h.z * sr, ratio(double{p[GruOp::R].scale[j]} * h.s / rh.s, k)) + rh.z, rh);
    }
    std::vector<int32_t> hn(static_cast<size_t>(H));
    for (int64_t j = 0; j < H; ++j) {
      const int64_t Z = j, Rr = H + j, G = 2 * H + j;
      const int32_t zpre = clampq(rhu(qwx[Z] - wx.z, ratio(wx.s / zp.s, k)) + rhu(qrh[Z] - rh.z, ratio(rh.s / zp.s, k)) +
                                      bias(bx[Z], p[GruOp::Bx].scale[Z], zp.s) + bias(br[Z], p[GruOp::Br].scale[Z], zp.s) + zp.z,
                                  zp);
      const int32_t rpre = clampq(rhu(qwx[Rr] - wx.z, ratio(wx.s / rp.s, k)) + rhu(qrh[Rr] - rh.z, ratio(rh.s / rp.s, k)) +
                                      bias(bx[Rr], p[GruOp::Bx].scale[Rr], rp.s) + bias(br[Rr], p[GruOp::Br].scale[Rr], rp.s) + rp.z,
                                  rp);
      const int32_t z = sz(zpre), r = sr(rpre);
      const int32_t rab = clampq(rhu(qrh[G] - rh.z, ratio(rh.s / ab.s, k)) + bias(br[G], p[GruOp::Br].scale[G], ab.s) + ab.z, ab);
      const int32_t rrh = clampq(rhu(int128{r - ro.z} * (rab - ab.z), ratio(ro.s * ab.s / rr.s, k)) + rr.z, rr);
      const int32_t gpre = clampq(rhu(qwx[G] - wx.z, ratio(wx.s / gp.s, k)) + rhu(rrh - rr.z, ratio(rr.s / gp.s, k)) +
                                      bias(bx[G], p[GruOp::Bx].scale[G], gp.s) + gp.z,
                                  gp);
      const int32_t g = tg(gpre);
      const int32_t old = clampq(rhu(int128{z - zo.z} * (hq[j] - h.z), ratio(zo.s * h.s / oc.s, k)) + oc.z, oc);
      const int64_t one = static_cast<int64_t>(std::nearbyint(1.0 / zo.s)) + zo.z;
      const int32_t nw = clampq(rhu(int128{one - z} * (g - go.z), ratio(zo.s * go.s / nc.s, k)) + nc.z, nc);
      hn[j] = clampq(rhu(old - oc.z, ratio(oc.s / h.s, k)) + rhu(nw - nc.z, ratio(nc.s / h.s, k)) + h.z, h);
    }
    hq = hn;
    y.insert(y.end(), hq.begin(), hq.end());
  }
  return y;
}

TEST(QuantizedGru, BitExactAgainstIndependentOracle) {
  for (ScaleKind k : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier})
    for (bool sixteen : {false, true}) {
      const GruModel m = gru_test::torch_init_model(5, 8, 1, false, 7);
      const GruQuantConfig cfg = sixteen ? GruQuantConfig::int16(k) : GruQuantConfig::int8(k);
      const GruQuantParams p = calibrate(m, cfg, CalibMethod::MinMax, 12, 3);
      const QuantizedGru q(m, p);
      const int64_t T = 9;
      const std::vector<float> x = random_input(T, 1, 5, 55);
      const GruOutput out = q.forward(x.data(), Shape{T, 1, 5});
      std::vector<int32_t> qx(x.size());
      quantize(x.data(), Shape{static_cast<int64_t>(x.size())}, p.cells[0][GruOp::X], qx.data());
      const std::vector<int32_t> want = oracle_cell(m.cells[0], p.cells[0], k, qx, T);
      const QuantParams& hp = p.cells[0][GruOp::H];
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(out.y[i], dequantize_value(want[i], hp.scale[0], hp.zero_point[0]))
            << "element " << i << (sixteen ? " int16 " : " int8 ") << (k == ScaleKind::PowerOfTwo ? "pow2" : "multiplier");
    }
}

// Extremes: weights at +-max, calibration on small inputs, then inputs far outside the
// calibrated range so that every operator saturates; the integer path must still equal
// the 128-bit oracle (no intermediate may overflow or wrap).
TEST(QuantizedGru, SaturatingExtremesMatchOracle) {
  for (ScaleKind k : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier})
    for (bool sixteen : {false, true}) {
      GruModel m = gru_test::torch_init_model(48, 40, 1, false, 9);
      GruCell& c = m.cells[0];
      for (size_t i = 0; i < c.W.size(); ++i) c.W[i] = (i % 3 == 0) ? -4.0f : 4.0f;
      for (size_t i = 0; i < c.R.size(); ++i) c.R[i] = (i % 2 == 0) ? 4.0f : -4.0f;
      for (size_t i = 0; i < c.bx.size(); ++i) c.bx[i] = (i % 2 ? 1e-3f : -50.0f), c.br[i] = (i % 2 ? 50.0f : 0.0f);
      const GruQuantConfig cfg = sixteen ? GruQuantConfig::int16(k) : GruQuantConfig::int8(k);
      const GruQuantParams p = calibrate(m, cfg, CalibMethod::MinMax, 6, 2);
      const QuantizedGru q(m, p);
      const int64_t T = 5;
      std::vector<float> x = random_input(T, 1, 48, 12);
      for (float& v : x) v *= 1e4f;
      const GruOutput out = q.forward(x.data(), Shape{T, 1, 48});
      std::vector<int32_t> qx(x.size());
      quantize(x.data(), Shape{static_cast<int64_t>(x.size())}, p.cells[0][GruOp::X], qx.data());
      const std::vector<int32_t> want = oracle_cell(m.cells[0], p.cells[0], k, qx, T);
      const QuantParams& hp = p.cells[0][GruOp::H];
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(out.y[i], dequantize_value(want[i], hp.scale[0], hp.zero_point[0])) << i;
    }
}

double cosine_vs_float(const GruModel& m, const QuantizedGru& q, int64_t T, int64_t B, uint32_t seed) {
  const std::vector<float> x = random_input(T, B, m.input_size, seed);
  const GruOutput f = gru_forward(m, x.data(), Shape{T, B, m.input_size});
  const GruOutput i = q.forward(x.data(), Shape{T, B, m.input_size});
  return cosine(f.y.data(), i.y.data(), f.y.size());
}

// The acceptance table: random-weight GRUs, outputs against float.
TEST(QuantizedGru, AccuracyAgainstFloatOnRandomModels) {
  std::printf("%-28s %-7s %-10s %12s\n", "model", "config", "scales", "cosine");
  for (int64_t H : {64, 256}) {
    const GruModel m = gru_test::torch_init_model(H, H, 2, true, static_cast<uint32_t>(H));
    for (ScaleKind k : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier})
      for (bool sixteen : {true, false}) {
        const GruQuantConfig cfg = sixteen ? GruQuantConfig::int16(k) : GruQuantConfig::int8(k);
        const QuantizedGru q(m, calibrate(m, cfg, CalibMethod::MinMax, 40, 4));
        const double cos = cosine_vs_float(m, q, 40, 4, 999);
        std::printf("H=%-4lld C=H 2 layers bidir    %-7s %-10s %12.6f\n", static_cast<long long>(H), sixteen ? "int16" : "int8",
                    k == ScaleKind::PowerOfTwo ? "pow2" : "multiplier", cos);
        EXPECT_GE(cos, sixteen ? 0.9999 : 0.995) << "H=" << H;
      }
  }
}

TEST(QuantizedGru, EveryCalibrationMethodWorks) {
  const GruModel m = gru_test::torch_init_model(16, 32, 1, false, 3);
  for (CalibMethod method : {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile, CalibMethod::Mse}) {
    const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo), method, 30, 4));
    EXPECT_GE(cosine_vs_float(m, q, 30, 4, 77), 0.99) << to_string(method);
  }
}

// Batching and lengths: each item of a padded batch equals that item run alone.
TEST(QuantizedGru, BatchedWithLengthsEqualsEachSequenceAlone) {
  const GruModel m = gru_test::torch_init_model(6, 10, 2, true, 11);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int16(ScaleKind::Multiplier), CalibMethod::MinMax, 10, 3));
  const int64_t T = 7, B = 3, C = 6, D = 2, H = 10;
  const std::vector<float> x = random_input(T, B, C, 5);
  const std::vector<int64_t> lengths{7, 3, 5};
  GruRunOptions opt;
  opt.lengths = lengths;
  const GruOutput all = q.forward(x.data(), Shape{T, B, C}, opt);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t L = lengths[static_cast<size_t>(b)];
    std::vector<float> xb;
    for (int64_t t = 0; t < L; ++t) xb.insert(xb.end(), x.begin() + (t * B + b) * C, x.begin() + (t * B + b + 1) * C);
    const GruOutput one = q.forward(xb.data(), Shape{L, 1, C});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < D * H; ++j) {
        const float got = all.y[static_cast<size_t>((t * B + b) * D * H + j)];
        if (t < L) {
          ASSERT_EQ(got, one.y[static_cast<size_t>(t * D * H + j)]) << "b=" << b << " t=" << t;
        } else {
          ASSERT_EQ(got, 0.0f) << "padding must stay untouched";
        }
      }
    for (int64_t c = 0; c < 2 * D; ++c)
      for (int64_t j = 0; j < H; ++j)
        ASSERT_EQ(all.h_n[static_cast<size_t>((c * B + b) * H + j)], one.h_n[static_cast<size_t>(c * H + j)]);
  }
  // batch_first gives the same numbers, transposed.
  std::vector<float> xbf(x.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(x.begin() + (t * B + b) * C, C, xbf.begin() + (b * T + t) * C);
  opt.batch_first = true;
  const GruOutput bf = q.forward(xbf.data(), Shape{B, T, C}, opt);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < D * H; ++j)
        ASSERT_EQ(bf.y[static_cast<size_t>((b * T + t) * D * H + j)], all.y[static_cast<size_t>((t * B + b) * D * H + j)]);
}

TEST(QuantizedGru, StreamingEqualsWholeSequence) {
  for (bool sixteen : {false, true}) {
    const GruModel m = gru_test::torch_init_model(5, 9, 2, false, 21);
    const GruQuantConfig cfg = sixteen ? GruQuantConfig::int16(ScaleKind::Multiplier) : GruQuantConfig::int8(ScaleKind::PowerOfTwo);
    const QuantizedGru q(m, calibrate(m, cfg, CalibMethod::MinMax, 8, 2));
    const int64_t T = 11, B = 2, C = 5, H = 9;
    const std::vector<float> x = random_input(T, B, C, 3);
    const std::vector<float> h0 = random_input(2, B, H, 4);
    GruRunOptions opt;
    opt.h0 = h0.data();
    const GruOutput whole = q.forward(x.data(), Shape{T, B, C}, opt);
    QuantizedGruStream stream(q, B, h0.data());
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<float> h = stream.step(x.data() + t * B * C);
      for (int64_t i = 0; i < B * H; ++i) ASSERT_EQ(h[static_cast<size_t>(i)], whole.y[static_cast<size_t>(t * B * H + i)]) << t;
    }
    EXPECT_EQ(stream.state(), whole.h_n);
  }
  const GruModel bidi = gru_test::torch_init_model(3, 4, 1, true, 5);
  const QuantizedGru qb(bidi, calibrate(bidi, GruQuantConfig::int8(ScaleKind::PowerOfTwo), CalibMethod::MinMax, 4, 1));
  EXPECT_THROW(QuantizedGruStream(qb, 1), Error);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("fixq_qgru_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(QuantizedGru, FileAndJsonRoundTripsAreBitExact) {
  const GruModel m = gru_test::torch_init_model(7, 12, 2, true, 13);
  const GruQuantParams p = calibrate(m, GruQuantConfig::int8(ScaleKind::Multiplier), CalibMethod::Ema, 8, 2);
  const QuantizedGru q(m, p);
  const std::vector<float> x = random_input(6, 2, 7, 8);
  const GruOutput a = q.forward(x.data(), Shape{6, 2, 7});
  const std::string path = temp_path("model.fixq");
  q.save(path);
  const QuantizedGru back = QuantizedGru::load(path);
  const GruOutput b = back.forward(x.data(), Shape{6, 2, 7});
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.h_n, b.h_n);
  const QuantizedGru from_json(m, GruQuantParams::from_json(p.to_json()));
  EXPECT_EQ(from_json.forward(x.data(), Shape{6, 2, 7}).y, a.y);
  // A truncated file is a clear error.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  expect_error([&] { QuantizedGru::load(path); }, path);
  std::remove(path.c_str());
}

TEST(QuantizedGru, BadInputIsAClearError) {
  const GruModel m = gru_test::torch_init_model(4, 6, 1, false, 17);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo), CalibMethod::MinMax, 5, 2));
  std::vector<float> x = random_input(3, 2, 4, 1);
  expect_error([&] { q.forward(x.data(), Shape{3, 2, 5}); }, "expects 4");
  expect_error([&] { q.forward(x.data(), Shape{6, 4}); }, "must be 3-D");
  x[5] = std::nanf("");
  expect_error([&] { q.forward(x.data(), Shape{3, 2, 4}); }, "element 5");
  x[5] = 0.0f;
  const std::vector<int64_t> bad{3, 4};
  GruRunOptions opt;
  opt.lengths = bad;
  expect_error([&] { q.forward(x.data(), Shape{3, 2, 4}, opt); }, "outside [0, 3]");
  expect_error([&] { GruQuantParams::from_json(R"({"version": 1, "config": {"version": 1}, "cells": [{"zz": {}}]})"); }, "zz");
  GruCalibrator cal(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo), ObserverConfig{});
  expect_error([&] { cal.finalize(); }, "no data observed");
}

}  // namespace
}  // namespace fixq
