// GruCalibrator: operator ranges from streamed float runs, then every parameter.
#include <algorithm>

#include "fixq/error.h"
#include "fixq/qgru.h"
#include "gru/ptq/gru_ptq_state.h"

namespace fixq {

using ptq_detail::is_parameter;
using ptq_detail::usable;

QuantParams gru_parameter_params(GruOp op, const GruQuantConfig& config, std::span<const float> values, int64_t rows) {
  require(is_parameter(op), "gru_parameter_params: ", to_string(op), " is not a weight or bias operator (W, R, bx, br)");
  require(rows >= 1 && !values.empty() && values.size() % static_cast<size_t>(rows) == 0, "gru_parameter_params: ",
          values.size(), " values do not form ", rows, " rows");
  const QuantScheme s = gru_op_scheme(op, config);
  const Shape shape{rows, static_cast<int64_t>(values.size()) / rows};
  std::vector<Range> r = minmax_ranges(values.data(), shape, s);
  for (Range& x : r) x = usable(x);
  return params_from_ranges(s, shape, r);
}

GruCalibrator::GruCalibrator(const GruModel& model, const GruQuantConfig& config, const ObserverConfig& method)
    : model_(&model), config_(config) {
  model.validate();
  config.validate();
  require(!method.per_channel, "GRU calibration observes every operator per tensor; per_channel must be off");
  observers_.reserve(model.cells.size());
  for (size_t c = 0; c < model.cells.size(); ++c) {
    observers_.push_back([&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<Observer, kGruOpCount>{((void)I, Observer(method))...};
    }(std::make_index_sequence<kGruOpCount>{}));
  }
}

void GruCalibrator::observe(const float* x, const Shape& x_shape, const GruRunOptions& options) {
  GruRunOptions opt = options;
  const int dirs = model_->directions();
  GruTap tap;
  tap.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* values, const Shape& shape) {
    // Both directions read the same layer input: observe it once, in time order.
    if (op == GruOp::X && direction != 0) return;
    if (shape.empty() || numel(shape) == 0) return;
    observers_[static_cast<size_t>(layer * dirs + direction)][static_cast<size_t>(op)].observe(values, shape);
  };
  opt.tap = &tap;
  gru_forward(*model_, x, x_shape, opt);
  ++batches_;
}

GruQuantParams GruCalibrator::finalize() const {
  require(batches_ > 0, "GRU calibration: no data observed; call observe() with calibration sequences first");
  GruQuantParams p;
  p.config = config_;
  const int dirs = model_->directions();
  for (size_t c = 0; c < model_->cells.size(); ++c) {
    const GruCell& cell = model_->cells[c];
    GruCellParams cp;
    for (int i = 0; i < kGruOpCount; ++i) {
      const GruOp op = static_cast<GruOp>(i);
      if (is_parameter(op)) continue;
      const QuantScheme s = gru_op_scheme(op, config_);
      if (!gru_op_used(op, model_->cell_kind)) {
        // An operator the cell does not have (fixq/gru.h): the all-zero slot's placeholder.
        const Range none = usable({0.0f, 0.0f});
        cp[op] = params_from_ranges(s, Shape{1}, std::span<const Range>(&none, 1));
        continue;
      }
      // X of the reverse direction is the forward direction's (see the header).
      const size_t src = op == GruOp::X ? c - c % static_cast<size_t>(dirs) : c;
      const Observer& obs = observers_[src][static_cast<size_t>(i)];
      require(obs.batches() > 0, "GRU calibration: operator ", to_string(op), " of cell ", src,
              " saw no data (every sequence empty?)");
      std::vector<Range> r = obs.ranges(s);
      for (Range& x : r) x = usable(x);
      cp[op] = params_from_ranges(s, Shape{1}, r);
    }
    const int64_t h3 = 3 * cell.hidden_size;
    cp[GruOp::W] = gru_parameter_params(GruOp::W, config_, cell.W, h3);
    cp[GruOp::R] = gru_parameter_params(GruOp::R, config_, cell.R, h3);
    cp[GruOp::Bx] = gru_parameter_params(GruOp::Bx, config_, cell.bx, h3);
    cp[GruOp::Br] = gru_parameter_params(GruOp::Br, config_, cell.br, h3);
    p.cells.push_back(std::move(cp));
  }
  return p;
}

}  // namespace fixq
