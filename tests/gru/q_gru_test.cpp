// The integer GRU: bit-exact against an independent integer oracle written from
// docs/spec.md (gru/q_oracle.h), accuracy against the float GRU on random-weight models, and
// batching, lengths, files and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <limits>
#include <vector>

#include "fixq/error.h"
#include "fixq/metrics.h"
#include "fixq/qgru.h"
#include "gru/float_test_util.h"
#include "gru/q_oracle.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

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

// ---- the independent oracle (gru/q_oracle.h) on one layer, one direction, batch 1 ----
// (q_oracle_test.cpp takes it through layers, directions, lengths and every kernel path.)

std::vector<float> oracle_y(const GruModel& m, const GruQuantParams& p, const std::vector<float>& x, int64_t T) {
  return gru_oracle::forward(m, p, x.data(), T, 1).y;
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
      const std::vector<float> want = oracle_y(m, p, x, T);
      ASSERT_EQ(out.y.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(out.y[i], want[i]) << "element " << i << (sixteen ? " int16 " : " int8 ") << (k == ScaleKind::PowerOfTwo ? "pow2" : "multiplier");
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
      const std::vector<float> want = oracle_y(m, p, x, T);
      ASSERT_EQ(out.y.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out.y[i], want[i]) << i;
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

// forward(x, shape, out) keeps out's storage and this thread's integer buffers between
// calls: a call must not see anything of the one before, whatever its shape, lengths or
// model (padding back to 0 after a call that wrote there, a smaller batch after a larger).
TEST(QuantizedGru, ReusedOutputsAndBuffersCarryNothingOver) {
  const GruModel m2 = gru_test::torch_init_model(6, 10, 2, true, 11);
  const QuantizedGru q2(m2, calibrate(m2, GruQuantConfig::int8(ScaleKind::PowerOfTwo), CalibMethod::MinMax, 10, 3));
  const GruModel m1 = gru_test::torch_init_model(6, 7, 1, false, 12);
  const QuantizedGru q1(m1, calibrate(m1, GruQuantConfig::int16(ScaleKind::Multiplier), CalibMethod::MinMax, 10, 3));
  const int64_t C = 6;
  GruOutput out;
  struct Call {
    const QuantizedGru* q;
    int64_t T, B;
    std::vector<int64_t> lengths;
  };
  const std::vector<Call> calls = {{&q2, 9, 4, {}},       {&q2, 9, 4, {9, 2, 5, 0}}, {&q2, 5, 2, {}},
                                   {&q1, 12, 3, {}},      {&q2, 9, 4, {}},           {&q1, 3, 1, {2}},
                                   {&q2, 9, 4, {1, 9, 9, 3}}};
  uint32_t seed = 40;
  for (const Call& c : calls) {
    const std::vector<float> x = random_input(c.T, c.B, C, seed++);
    GruRunOptions opt;
    opt.lengths = c.lengths;
    c.q->forward(x.data(), Shape{c.T, c.B, C}, out, opt);
    const GruOutput fresh = c.q->forward(x.data(), Shape{c.T, c.B, C}, opt);
    ASSERT_EQ(out.y, fresh.y) << "T=" << c.T << " B=" << c.B << " lengths " << c.lengths.size();
    ASSERT_EQ(out.h_n, fresh.h_n);
    // And the first call of a fresh thread (empty buffers) agrees with both.
    GruOutput other;
    std::thread([&] { other = c.q->forward(x.data(), Shape{c.T, c.B, C}, opt); }).join();
    ASSERT_EQ(other.y, fresh.y);
  }
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
  x[23] = -std::numeric_limits<float>::infinity();  // the last element: the vectors' tail
  expect_error([&] { q.forward(x.data(), Shape{3, 2, 4}); }, "element 23 is -inf");
  QuantizedGruStream stream(q, 2);
  const std::vector<float> before = stream.state();
  expect_error([&] { stream.step(x.data() + 16); }, "frame element 7 is -inf");
  EXPECT_EQ(stream.state(), before) << "a refused frame leaves the state as it was";
  x[23] = 0.0f;
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
