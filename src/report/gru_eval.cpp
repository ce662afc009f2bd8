// evaluate_gru: a quantized GRU against its float model on the same sequences (fixq/report.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fixq/error.h"
#include "fixq/report.h"

namespace fixq {

namespace {

// The quantized model must be of the float model's shape, or the per-operator parameters
// would not line up with the float run's cells.
void require_same_shape(const GruModel& m, const QuantizedGru& q) {
  if (m.input_size != q.input_size() || m.hidden_size != q.hidden_size() || m.num_layers != q.num_layers() ||
      m.bidirectional != q.bidirectional())
    fail("the quantized model (input ", q.input_size(), ", hidden ", q.hidden_size(), ", layers ", q.num_layers(),
         q.bidirectional() ? ", bidirectional" : "", ") is not a quantization of the float model (input ", m.input_size,
         ", hidden ", m.hidden_size, ", layers ", m.num_layers, m.bidirectional ? ", bidirectional" : "",
         "); pass the float model it was calibrated from");
}

}  // namespace

ErrorStats quantization_error(const std::vector<float>& x, const Shape& shape, const QuantParams& params) {
  std::vector<int32_t> q(x.size());
  std::vector<float> back(x.size());
  quantize(x.data(), shape, params, q.data());
  dequantize(q.data(), shape, params, back.data());
  ErrorStats stats;
  stats.add(x.data(), back.data(), x.size());
  return stats;
}

std::string fmt_db(double db) {
  if (std::isinf(db)) return db > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", db);
  return buf;
}

GruEvaluation evaluate_gru(const GruModel& model, const QuantizedGru& q, const float* x, const Shape& x_shape,
                           const GruEvalOptions& options) {
  require_same_shape(model, q);
  require(x_shape.size() == 3, "evaluation sequences must be 3-D ", options.batch_first ? "[B, T, C]" : "[T, B, C]",
          ", got ", shape_str(x_shape));
  require(x_shape[2] == model.input_size, "evaluation sequences have ", x_shape[2], " features, the model expects ",
          model.input_size);
  require(options.batch >= 1, "evaluate_gru: batch must be >= 1, got ", options.batch);
  const int64_t T = x_shape[options.batch_first ? 1 : 0], B = x_shape[options.batch_first ? 0 : 1], C = x_shape[2];
  const GruQuantParams& p = q.params();

  GruEvaluation r;
  r.per_step.resize(static_cast<size_t>(T));
  r.per_op.resize(kGruOpCount);
  r.ops.resize(model.cells.size());
  // Every operator's own quantization error: its float values against their round trip
  // through that operator's parameters, over the float run; and what those values are.
  GruTap observe;
  observe.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* v, const Shape& shape) {
    const size_t cell = static_cast<size_t>(layer * model.directions() + direction);
    const QuantParams& qp = p.cells[cell][op];
    OpValueStats& stats = r.ops[cell][static_cast<size_t>(op)];
    if (stats.empty()) stats = OpValueStats(qp);
    std::vector<float> values(v, v + numel(shape));
    r.per_op[static_cast<size_t>(op)].merge(quantization_error(values, Shape{static_cast<int64_t>(values.size())}, qp));
    stats.observe(v, numel(shape));
  };
  GruTap histogram;
  histogram.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* v, const Shape& shape) {
    r.ops[static_cast<size_t>(layer * model.directions() + direction)][static_cast<size_t>(op)].bin(v, numel(shape));
  };

  const int64_t total = B * (options.value_histograms ? 2 : 1);
  int64_t done = 0;
  auto advance = [&](int64_t n) {
    done += n;
    if (options.progress) options.progress(done, total);
  };
  for (int64_t b0 = 0; b0 < B; b0 += options.batch) {
    const int64_t b1 = std::min(B, b0 + options.batch), n = b1 - b0;
    const std::vector<float> xb = time_major_items(x, x_shape, options.batch_first, b0, b1);
    GruRunOptions fopt;
    fopt.tap = &observe;
    const GruOutput f = gru_forward(model, xb.data(), Shape{T, n, C}, fopt);
    const GruOutput i = q.forward(xb.data(), Shape{T, n, C});
    r.output.add(f.y.data(), i.y.data(), f.y.size());
    const size_t per_step = f.y.size() / static_cast<size_t>(std::max<int64_t>(T, 1));
    for (int64_t t = 0; t < T; ++t)
      r.per_step[static_cast<size_t>(t)].add(f.y.data() + t * per_step, i.y.data() + t * per_step, per_step);
    advance(n);
  }
  if (options.value_histograms) {
    // The second float pass: the bins span the values the first one saw.
    for (auto& cell : r.ops)
      for (OpValueStats& v : cell)
        if (!v.empty()) v.fix_bins(kReportHistogramBins);
    for (int64_t b0 = 0; b0 < B; b0 += options.batch) {
      const int64_t b1 = std::min(B, b0 + options.batch);
      const std::vector<float> xb = time_major_items(x, x_shape, options.batch_first, b0, b1);
      GruRunOptions fopt;
      fopt.tap = &histogram;
      gru_forward(model, xb.data(), Shape{T, b1 - b0, C}, fopt);
      advance(b1 - b0);
    }
  }
  return r;
}

}  // namespace fixq
