// evaluate_gru (fixq/report.h) against the same quantities computed here from the two
// forward passes directly, and OpValueStats against a count written out in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fixq/qgru.h"
#include "fixq/report.h"
#include "gru/float_test_util.h"
#include "support/expect.h"

namespace fixq {
namespace {

struct Fixture {
  GruModel model = gru_test::random_model(5, 7, 2, true, 3);
  Shape shape{9, 6, 5};  // T, B, C
  std::vector<float> x = gru_test::random_values(9 * 6 * 5, 11);
  QuantizedGru q = [&] {
    GruCalibrator cal(model, GruQuantConfig::int8(ScaleKind::PowerOfTwo), ObserverConfig{});
    // Calibrated on half the range, so that the evaluation data saturates some operators.
    std::vector<float> half(x);
    for (float& v : half) v *= 0.5f;
    cal.observe(half.data(), shape);
    return QuantizedGru(model, cal.finalize());
  }();
};

TEST(GruEval, OutputAndPerStepErrorsAreThoseOfTheTwoForwardPasses) {
  const Fixture f;
  const GruOutput fl = gru_forward(f.model, f.x.data(), f.shape);
  const GruOutput qu = f.q.forward(f.x.data(), f.shape);
  ErrorStats all;
  all.add(fl.y.data(), qu.y.data(), fl.y.size());
  const size_t per_step = fl.y.size() / 9;

  for (int64_t batch : {1, 4, 16}) {  // sequences never interact: the batch size cannot matter
    GruEvalOptions o;
    o.batch = batch;
    const GruEvaluation e = evaluate_gru(f.model, f.q, f.x.data(), f.shape, o);
    EXPECT_EQ(e.output.count(), all.count());
    EXPECT_EQ(e.output.maxerr(), all.maxerr());
    EXPECT_NEAR(e.output.sqnr_db(), all.sqnr_db(), 1e-9);
    ASSERT_EQ(e.per_step.size(), 9u);
    for (size_t t = 0; t < 9; ++t) {
      ErrorStats step;
      step.add(fl.y.data() + t * per_step, qu.y.data() + t * per_step, per_step);
      EXPECT_EQ(e.per_step[t].count(), step.count()) << t;
      EXPECT_EQ(e.per_step[t].maxerr(), step.maxerr()) << t;
    }
  }
}

TEST(GruEval, OperatorStatsCountEveryValueTheFloatRunProduces) {
  const Fixture f;
  // The values of each (cell, operator), collected here through the same tap.
  std::vector<std::array<std::vector<float>, kGruOpCount>> seen(f.model.cells.size());
  GruTap tap;
  tap.on_value = [&](int layer, int dir, int64_t, GruOp op, const float* v, const Shape& s) {
    auto& dst = seen[static_cast<size_t>(layer * f.model.directions() + dir)][static_cast<size_t>(op)];
    dst.insert(dst.end(), v, v + numel(s));
  };
  GruRunOptions ro;
  ro.tap = &tap;
  gru_forward(f.model, f.x.data(), f.shape, ro);

  GruEvalOptions o;
  o.value_histograms = true;
  const GruEvaluation e = evaluate_gru(f.model, f.q, f.x.data(), f.shape, o);
  ASSERT_EQ(e.ops.size(), f.model.cells.size());
  uint64_t saturated = 0;
  for (size_t cell = 0; cell < seen.size(); ++cell)
    for (int op = 0; op < kGruOpCount; ++op) {
      const std::vector<float>& v = seen[cell][static_cast<size_t>(op)];
      const OpValueStats& s = e.ops[cell][static_cast<size_t>(op)];
      ASSERT_EQ(s.count(), v.size()) << cell << " " << op;
      if (v.empty()) continue;
      // Saturation as quantize() clamps: the round trip of each value against its qmin / qmax.
      // nearbyint rounds half to even in the default rounding mode.
      const QuantParams& qp = f.q.params().cells[cell][static_cast<GruOp>(op)];
      uint64_t lo = 0, hi = 0, binned = 0;
      for (float x : v) {
        const double t = std::nearbyint(static_cast<double>(x / qp.scale[0])) + qp.zero_point[0];
        lo += t < qp.scheme.format.qmin();
        hi += t > qp.scheme.format.qmax();
      }
      EXPECT_EQ(s.below(), lo) << cell << " " << op;
      EXPECT_EQ(s.above(), hi) << cell << " " << op;
      saturated += lo + hi;
      for (uint64_t b : s.bins()) binned += b;
      EXPECT_EQ(binned, v.size()) << "every value lands in one histogram bin";
      EXPECT_EQ(s.bins().size(), static_cast<size_t>(kReportHistogramBins));
      EXPECT_LE(s.bins_lo(), std::min<double>(s.min(), s.range_lo()));
      EXPECT_GE(s.bins_hi(), std::max<double>(s.max(), s.range_hi()));
    }
  EXPECT_GT(saturated, 0u) << "the half-range calibration should saturate some operator";
}

TEST(GruEval, ProgressCountsBothPasses) {
  const Fixture f;
  GruEvalOptions o;
  o.batch = 4;
  o.value_histograms = true;
  std::vector<std::pair<int64_t, int64_t>> calls;
  o.progress = [&](int64_t done, int64_t total) { calls.emplace_back(done, total); };
  evaluate_gru(f.model, f.q, f.x.data(), f.shape, o);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{4, 12}, {6, 12}, {10, 12}, {12, 12}};
  EXPECT_EQ(calls, expected);
}

TEST(GruEval, RefusesMismatchedInputs) {
  const Fixture f;
  const GruModel other = gru_test::random_model(5, 8, 2, true, 4);
  test::expect_error([&] { evaluate_gru(other, f.q, f.x.data(), f.shape); }, "not a quantization of",
                     "hidden 7", "hidden 8");
  test::expect_error([&] { evaluate_gru(f.model, f.q, f.x.data(), Shape{9, 6 * 5}); }, "3-D");
  const std::vector<float> wide(9 * 6 * 6, 0.0f);
  test::expect_error([&] { evaluate_gru(f.model, f.q, wide.data(), Shape{9, 6, 6}); }, "6 features", "expects 5");
  GruEvalOptions o;
  o.batch = 0;
  test::expect_error([&] { evaluate_gru(f.model, f.q, f.x.data(), f.shape, o); }, "batch must be >= 1");
}

TEST(GruEval, FmtDbShowsInfinities) {
  EXPECT_EQ(fmt_db(12.5), "12.50");
  EXPECT_EQ(fmt_db(-3.25), "-3.25");
  EXPECT_EQ(fmt_db(INFINITY), "inf");
  EXPECT_EQ(fmt_db(-INFINITY), "-inf");
}

}  // namespace
}  // namespace fixq
