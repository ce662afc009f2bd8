// Post-training quantization (fixq/gru_ptq.h): GPTQ against the layer error computed from
// the data itself, bias correction against means computed from the inputs, the searches
// against independent runs of the integer model, auto bits against its own promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "fixq/error.h"
#include "fixq/gru_ptq.h"
#include "fixq/metrics.h"
#include "gru/float_test_util.h"

namespace fixq {
namespace {

using gru_test::random_values;
using gru_test::torch_init_model;

// Correlated inputs x_t = A z_t (z standard normal), [n, d] row-major: GPTQ has something
// to exploit only when inputs are correlated.
std::vector<float> correlated_inputs(int64_t n, int64_t d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(d * d)), x(static_cast<size_t>(n * d));
  for (float& v : a) v = g(rng) * 0.5f;
  for (int64_t i = 0; i < d; ++i) a[i * d + i] += 1.0f;
  std::vector<float> z(static_cast<size_t>(d));
  for (int64_t t = 0; t < n; ++t) {
    for (float& v : z) v = g(rng);
    for (int64_t i = 0; i < d; ++i) {
      double s = 0.3;  // a mean, as real activations have
      for (int64_t k = 0; k < d; ++k) s += a[i * d + k] * z[k];
      x[t * d + i] = static_cast<float>(s);
    }
  }
  return x;
}

std::vector<double> second_moment(const std::vector<float>& x, int64_t n, int64_t d) {
  std::vector<double> h(static_cast<size_t>(d * d), 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) h[i * d + j] += double{x[t * d + i]} * x[t * d + j] / static_cast<double>(n);
  return h;
}

// Per row: sum_t ((W - W_q) x_t)^2 over the data, the quantity GPTQ minimises, computed
// from the inputs themselves (not from the second moment GPTQ was given).
std::vector<double> layer_error(const std::vector<float>& w, const std::vector<int32_t>& q, const std::vector<float>& scale,
                                const std::vector<float>& x, int64_t rows, int64_t n, int64_t d) {
  std::vector<double> e(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < n; ++t) {
      double s = 0.0;
      for (int64_t k = 0; k < d; ++k) s += (double{w[r * d + k]} - static_cast<double>(q[r * d + k]) * scale[r]) * x[t * d + k];
      e[r] += s * s;
    }
  return e;
}

TEST(Gptq, NeverIncreasesTheLayerErrorAndUsuallyLowersIt) {
  const int64_t rows = 48, d = 24, n = 400;
  for (int bits : {8, 4}) {
    const std::vector<float> x = correlated_inputs(n, d, 3);
    const std::vector<float> w = random_values(static_cast<size_t>(rows * d), 4, 0.5f);
    const int32_t qmax = (1 << (bits - 1)) - 1;
    std::vector<float> scale(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      float m = 0.0f;
      for (int64_t k = 0; k < d; ++k) m = std::max(m, std::fabs(w[r * d + k]));
      scale[r] = m / static_cast<float>(qmax);
    }
    const std::vector<int32_t> g = gptq_round(w, rows, d, second_moment(x, n, d), scale, -qmax - 1, qmax);
    std::vector<int32_t> nearest(w.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < d; ++k) nearest[r * d + k] = quantize_value(w[r * d + k], scale[r], 0, {-qmax - 1, qmax});
    const std::vector<double> eg = layer_error(w, g, scale, x, rows, n, d), en = layer_error(w, nearest, scale, x, rows, n, d);
    double sum_g = 0.0, sum_n = 0.0;
    int better = 0;
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_LE(eg[r], en[r] * (1 + 1e-9)) << "row " << r << ", " << bits << " bits";
      better += eg[r] < en[r] * (1 - 1e-6);
      sum_g += eg[r];
      sum_n += en[r];
    }
    for (int32_t v : g) ASSERT_TRUE(v >= -qmax - 1 && v <= qmax);
    // On correlated inputs GPTQ wins on most rows and clearly overall.
    EXPECT_GT(better, rows / 2) << bits << " bits";
    EXPECT_LT(sum_g, 0.8 * sum_n) << bits << " bits";
  }
}

TEST(Gptq, EqualsNearestWhenInputsAreUncorrelated) {
  // A diagonal second moment: no column can compensate another (the inverse's factor is
  // diagonal), so GPTQ rounds every weight to nearest.
  const int64_t rows = 6, d = 5;
  std::vector<double> h(static_cast<size_t>(d * d), 0.0);
  for (int64_t i = 0; i < d; ++i) h[i * d + i] = 1.0 + static_cast<double>(i);
  const std::vector<float> w = random_values(static_cast<size_t>(rows * d), 9, 1.0f);
  const std::vector<float> scale(static_cast<size_t>(rows), 1.0f / 64);
  const std::vector<int32_t> g = gptq_round(w, rows, d, h, scale, -128, 127, 0.0);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(g[i], quantize_value(w[i], 1.0f / 64, 0, {-128, 127})) << i;
}

TEST(Gptq, RejectsBadArguments) {
  const std::vector<float> w(6, 0.5f), s(2, 0.1f);
  const std::vector<double> h(9, 0.0);
  EXPECT_THROW(gptq_round(w, 2, 4, h, s, -8, 7), Error);                       // 6 weights are not [2, 4]
  EXPECT_THROW(gptq_round(w, 2, 3, std::vector<double>(4), s, -8, 7), Error);  // statistics not [3, 3]
  EXPECT_THROW(gptq_round(w, 2, 3, h, std::vector<float>{0.1f}, -8, 7), Error);
  EXPECT_THROW(gptq_round(w, 2, 3, h, std::vector<float>{0.1f, -1.0f}, -8, 7), Error);
  std::vector<float> nan_w = w;
  nan_w[3] = NAN;
  EXPECT_THROW(gptq_round(nan_w, 2, 3, h, s, -8, 7), Error);
  // All-zero statistics (inputs never seen) are fine: nearest rounding.
  const std::vector<int32_t> q = gptq_round(w, 2, 3, h, s, -8, 7);
  for (int32_t v : q) EXPECT_EQ(v, 5);
}

// Calibration sequences [T, B, C] with a mean, as real inputs have.
std::vector<float> inputs(int64_t T, int64_t B, int64_t C, unsigned seed) {
  std::vector<float> x = random_values(static_cast<size_t>(T * B * C), seed, 1.5f);
  for (size_t i = 0; i < x.size(); ++i) x[i] += 0.2f * static_cast<float>(i % static_cast<size_t>(C)) / static_cast<float>(C);
  return x;
}

GruPtqOptions plain(CalibMethod m) {
  GruPtqOptions o;
  o.method = m;
  o.rounding = WeightRounding::Nearest;
  o.bias_correction = false;
  return o;
}

TEST(GruPtq, WithEveryStepOffIsTheCalibrator) {
  const GruModel model = torch_init_model(5, 9, 2, true, 21, 2.0f);
  const std::vector<float> x = inputs(12, 4, 5, 22);
  for (CalibMethod m : {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile, CalibMethod::Mse}) {
    const GruQuantConfig cfg = GruQuantConfig::int8(ScaleKind::PowerOfTwo);
    ObserverConfig oc;
    oc.method = m;
    GruCalibrator cal(model, cfg, oc);
    GruPtq ptq(model, plain(m));
    for (int64_t b = 0; b < 4; b += 2) {  // two batches of two sequences: EMA sees both
      std::vector<float> xb;
      for (int64_t t = 0; t < 12; ++t) xb.insert(xb.end(), x.begin() + (t * 4 + b) * 5, x.begin() + (t * 4 + b + 2) * 5);
      cal.observe(xb.data(), {12, 2, 5});
      ptq.observe(xb.data(), {12, 2, 5});
    }
    const GruPtqResult r = ptq.quantize(cfg);
    EXPECT_EQ(r.params.to_json(), cal.finalize().to_json()) << to_string(m);
    for (size_t c = 0; c < model.cells.size(); ++c) {
      EXPECT_EQ(r.model.cells[c].W, model.cells[c].W);
      EXPECT_EQ(r.model.cells[c].bx, model.cells[c].bx);
    }
  }
}

TEST(GruPtq, RoundedWeightsLieOnTheirGridAndBiasesAreCorrectedByTheInputMean) {
  const int64_t C = 6, H = 10, T = 30, B = 4;
  const GruModel model = torch_init_model(C, H, 1, false, 31, 2.0f);
  const std::vector<float> x = inputs(T, B, C, 32);
  GruPtqOptions o = plain(CalibMethod::MinMax);
  o.rounding = WeightRounding::Gptq;
  o.bias_correction = true;
  GruPtq ptq(model, o);
  ptq.observe(x.data(), {T, B, C});
  const GruQuantConfig cfg = GruQuantConfig::int8(ScaleKind::Multiplier);
  const GruPtqResult r = ptq.quantize(cfg);
  const GruCell &orig = model.cells[0], &got = r.model.cells[0];
  const QuantParams& pw = r.params.cells[0][GruOp::W];
  // On the grid: the stored integers dequantize to exactly the returned float weights.
  const QuantizedGru q(r.model, r.params);
  const GruCellConstants k = q.cell_constants(0);
  for (int64_t j = 0; j < 3 * H; ++j)
    for (int64_t i = 0; i < C; ++i)
      ASSERT_EQ(got.W[j * C + i], dequantize_value(k.q_w[j * C + i], pw.scale[j], 0)) << j << ", " << i;
  // The layer input is x itself: its mean over every step and item, computed here.
  std::vector<double> mean(static_cast<size_t>(C), 0.0);
  for (int64_t n = 0; n < T * B; ++n)
    for (int64_t i = 0; i < C; ++i) mean[i] += x[n * C + i] / static_cast<double>(T * B);
  for (int64_t j = 0; j < 3 * H; ++j) {
    double e = 0.0;
    for (int64_t i = 0; i < C; ++i) e += (double{got.W[j * C + i]} - orig.W[j * C + i]) * mean[i];
    EXPECT_NEAR(got.bx[j], orig.bx[j] - e, 1e-6) << j;
  }
  // br is corrected by R's rounding: some bias moved, by at most half a step per weight times E|h| <= 1.
  EXPECT_NE(got.br, orig.br);
  for (int64_t j = 0; j < 3 * H; ++j)
    EXPECT_LE(std::fabs(got.br[j] - orig.br[j]), 0.5 * r.params.cells[0][GruOp::R].scale[j] * H + 1e-6);
}

// The output error of parameters on sequences, computed here from two independent runs.
double output_mse(const GruModel& reference, const GruModel& model, const GruQuantParams& p, const std::vector<float>& x,
                  const Shape& shape) {
  const GruOutput f = gru_forward(reference, x.data(), shape);
  const GruOutput q = QuantizedGru(model, p).forward(x.data(), shape);
  double s = 0.0;
  for (size_t i = 0; i < f.y.size(); ++i) s += (double{f.y[i]} - q.y[i]) * (double{f.y[i]} - q.y[i]);
  return s / static_cast<double>(f.y.size());
}

TEST(GruPtq, RangeSearchBeatsEveryUniformMethodOnTheCalibrationData) {
  const int64_t C = 4, H = 12, T = 40, B = 3;
  const GruModel model = torch_init_model(C, H, 2, false, 41, 3.0f);
  const std::vector<float> x = inputs(T, B, C, 42);
  for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
    const GruQuantConfig cfg = GruQuantConfig::int8(kind);
    GruPtqOptions o;
    o.rounding = WeightRounding::Nearest;
    o.bias_correction = false;
    GruPtq ptq(model, o);
    ptq.observe(x.data(), {T, B, C});
    const GruPtqResult r = ptq.quantize(cfg);
    const double mse = output_mse(model, r.model, r.params, x, {T, B, C});
    EXPECT_NEAR(r.calib_mse, mse, 1e-9 + 1e-6 * mse);
    double best_uniform = INFINITY;
    for (CalibMethod m : {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile, CalibMethod::Mse}) {
      GruPtq one(model, plain(m));
      one.observe(x.data(), {T, B, C});
      const GruPtqResult u = one.quantize(cfg);
      best_uniform = std::min(best_uniform, output_mse(model, u.model, u.params, x, {T, B, C}));
    }
    EXPECT_LE(mse, best_uniform) << to_string(kind);
    EXPECT_LT(mse, 0.9 * best_uniform) << "the search should find something on a saturating model";
    // Every choice is described, and x is shared by the two cells of a layer.
    for (const auto& cell : r.choices)
      for (const std::string& s : cell) EXPECT_FALSE(s.empty());
  }
}

TEST(GruPtq, AutoBitsMeetsItsTargetWithNothingToSpare) {
  const int64_t C = 4, H = 8, T = 30, B = 3;
  const GruModel model = torch_init_model(C, H, 1, false, 51, 3.0f);
  const std::vector<float> x = inputs(T, B, C, 52);
  GruPtq ptq(model, GruPtqOptions{});
  ptq.observe(x.data(), {T, B, C});
  const GruQuantConfig base = GruQuantConfig::int8(ScaleKind::PowerOfTwo);
  // A target int8 misses: a quarter of int8's distance to a cosine of 1.
  const double int8_cos = ptq.quantize(base).calib_cosine;
  ASSERT_LT(int8_cos, 0.9999);
  GruAutoBitsOptions o;
  o.target_cosine = 1.0 - (1.0 - int8_cos) / 4;
  const GruAutoBitsResult r = ptq.auto_bits(base, o);
  ASSERT_TRUE(r.target_met) << r.result.calib_cosine << " with " << r.promoted.size() << " promoted";
  // The cosine it reports is that of the model it returns, computed here.
  const GruOutput f = gru_forward(model, x.data(), {T, B, C});
  const GruOutput q = QuantizedGru(r.result.model, r.result.params).forward(x.data(), {T, B, C});
  const double cos = cosine(f.y.data(), q.y.data(), f.y.size());
  EXPECT_NEAR(cos, r.result.calib_cosine, 1e-9);
  EXPECT_GE(cos, o.target_cosine);
  // The promoted operators are exactly the config's 16-bit ones, and each one is needed.
  const GruQuantConfig& got = r.result.params.config;
  int wide = 0;
  for (int i = 0; i < kGruOpCount; ++i) wide += got.bits[static_cast<size_t>(i)] > 8;
  EXPECT_EQ(wide, static_cast<int>(r.promoted.size()));
  EXPECT_GT(wide, 0);
  for (const std::string& name : r.promoted) {
    GruQuantConfig less = got;
    less.bits[static_cast<size_t>(parse_gru_op(name))] = 8;
    EXPECT_LT(ptq.quantize(less).calib_cosine, o.target_cosine) << name << " was not needed";
  }
  // The config survives JSON, and quantizing with it gives the same model.
  const GruQuantConfig back = GruQuantConfig::from_json(got.to_json());
  EXPECT_EQ(ptq.quantize(back).params.to_json(), r.result.params.to_json());
  EXPECT_EQ(r.cost.work(), gru_bits_cost(model, got).work());
  // A budget of the base's own work allows only promotions that add none. Which those are
  // is computed here, one operator at a time, by the cost model; the best that budget can
  // buy (all of them at 16 bits) still misses the target, so auto_bits must say it did.
  std::vector<GruOp> free_ops;
  GruQuantConfig all_free = base;
  for (int i = 0; i < kGruOpCount; ++i) {
    GruQuantConfig one = base;
    one.bits[static_cast<size_t>(i)] = 16;
    try {
      one.validate();
    } catch (const Error&) {
      continue;  // a width this operator cannot take alone
    }
    if (gru_bits_cost(model, one).work() == gru_bits_cost(model, base).work()) {
      free_ops.push_back(static_cast<GruOp>(i));
      all_free.bits[static_cast<size_t>(i)] = 16;
    }
  }
  ASSERT_FALSE(free_ops.empty()) << "no promotion is free: the budget case below would test nothing";
  const double best_within_budget = ptq.quantize(all_free).calib_cosine;
  ASSERT_LT(best_within_budget, o.target_cosine) << "free promotions alone reach the target";
  o.max_work_ratio = 1.0;
  const GruAutoBitsResult budget = ptq.auto_bits(base, o);
  EXPECT_EQ(budget.cost.work(), budget.base_cost.work());
  EXPECT_FALSE(budget.target_met) << budget.result.calib_cosine;
  EXPECT_LT(budget.result.calib_cosine, o.target_cosine);
  for (int i = 0; i < kGruOpCount; ++i) {
    const bool promoted = budget.result.params.config.bits[static_cast<size_t>(i)] > 8;
    const bool free = std::find(free_ops.begin(), free_ops.end(), static_cast<GruOp>(i)) != free_ops.end();
    EXPECT_TRUE(!promoted || free) << to_string(static_cast<GruOp>(i)) << " was promoted beyond the budget";
  }
}

TEST(GruBitsCost, CountsBytesMacsAndValues) {
  const GruModel model = torch_init_model(5, 7, 2, true, 61);
  GruQuantConfig c = GruQuantConfig::int8(ScaleKind::PowerOfTwo);
  const GruBitsCost k8 = gru_bits_cost(model, c);
  // Layer 0 cells: C = 5; layer 1 cells: C = 2H = 14. 3H = 21.
  EXPECT_EQ(k8.weight_bytes, 2 * (21 * 5 + 21 * 7 + 42) + 2 * (21 * 14 + 21 * 7 + 42));
  EXPECT_EQ(k8.macs, 2 * 21 * (5 + 7) + 2 * 21 * (14 + 7));
  EXPECT_EQ(k8.wide_macs, 0);
  EXPECT_EQ(k8.elementwise, 2 * (5 + 42 + 11 * 7) + 2 * (14 + 42 + 11 * 7));
  EXPECT_EQ(k8.work(), k8.macs + k8.elementwise);
  c.bits[static_cast<size_t>(GruOp::H)] = 16;
  c.bits[static_cast<size_t>(GruOp::Bx)] = 16;
  const GruBitsCost k = gru_bits_cost(model, c);
  EXPECT_EQ(k.weight_bytes, k8.weight_bytes + 4 * 21);
  EXPECT_EQ(k.wide_macs, 4 * 21 * 7);  // every R h product has a 16-bit operand
  EXPECT_EQ(k.wide_elementwise, 4 * 7);
}

TEST(GruPtq, RejectsBadUse) {
  const GruModel model = torch_init_model(3, 4, 1, false, 71);
  GruPtqOptions bad;
  bad.gptq_damp = -1;
  EXPECT_THROW(GruPtq(model, bad), Error);
  bad = {};
  bad.max_search_steps = 0;
  EXPECT_THROW(GruPtq(model, bad), Error);
  bad = {};
  bad.percentile = 20;
  EXPECT_THROW(GruPtq(model, bad), Error);
  GruPtq ptq(model);
  EXPECT_THROW(ptq.quantize(GruQuantConfig::int8(ScaleKind::PowerOfTwo)), Error);  // nothing observed
  const std::vector<float> x = inputs(5, 2, 3, 72);
  EXPECT_THROW(ptq.observe(x.data(), {5, 2, 4}), Error);  // wrong feature count
  std::vector<float> nan_x = x;
  nan_x[4] = NAN;
  EXPECT_THROW(ptq.observe(nan_x.data(), {5, 2, 3}), Error);
  EXPECT_EQ(ptq.batches(), 0);
  ptq.observe(x.data(), {5, 2, 3});
  GruAutoBitsOptions o;
  o.target_cosine = 1.5;
  EXPECT_THROW(ptq.auto_bits(GruQuantConfig::int8(ScaleKind::PowerOfTwo), o), Error);
  o.target_cosine = 0.999;
  o.max_work_ratio = 0.5;
  EXPECT_THROW(ptq.auto_bits(GruQuantConfig::int8(ScaleKind::PowerOfTwo), o), Error);
  EXPECT_EQ(parse_weight_rounding("gptq"), WeightRounding::Gptq);
  EXPECT_THROW(parse_weight_rounding("adaround"), Error);
}

}  // namespace
}  // namespace fixq
