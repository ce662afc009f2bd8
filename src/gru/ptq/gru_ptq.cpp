// GruPtq: statistics from calibration batches, then weight rounding, bias correction and
// the parameters of every operator (fixq/gru_ptq.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "fixq/error.h"
#include "gru/ptq/gru_ptq_state.h"

namespace fixq {

using ptq_detail::KeptBatch;
using ptq_detail::kMethods;
using ptq_detail::Moments;
using ptq_detail::usable;

std::string to_string(WeightRounding r) { return r == WeightRounding::Gptq ? "gptq" : "nearest"; }

WeightRounding parse_weight_rounding(const std::string& name) {
  if (name == "gptq") return WeightRounding::Gptq;
  if (name == "nearest") return WeightRounding::Nearest;
  fail("weight rounding '", name, "' is not one of: nearest, gptq");
}

std::string range_method_name(const std::optional<CalibMethod>& method) { return method ? to_string(*method) : "auto"; }

std::optional<CalibMethod> parse_range_method(std::string_view name, std::string_view what) {
  if (name == "auto") return std::nullopt;
  std::string known = "auto";
  for (CalibMethod m : kCalibMethods) {
    if (name == to_string(m)) return m;
    known += ", " + to_string(m);
  }
  fail(what, " must be one of ", known, ", got '", name, "'");
}

void GruPtqOptions::validate() const {
  require(std::isfinite(gptq_damp) && gptq_damp >= 0.0 && gptq_damp <= 1.0, "GRU PTQ: gptq_damp must be in [0, 1], got ",
          gptq_damp);
  require(search_sweeps >= 0 && search_sweeps <= 16, "GRU PTQ: search_sweeps must be in [0, 16], got ", search_sweeps);
  require(max_search_steps >= 1, "GRU PTQ: max_search_steps must be >= 1, got ", max_search_steps);
  ObserverConfig oc;
  oc.ema_decay = ema_decay;
  oc.percentile = percentile;
  oc.bins = bins;
  oc.validate();
}

namespace ptq_detail {

bool is_parameter(GruOp op) { return op == GruOp::W || op == GruOp::R || op == GruOp::Bx || op == GruOp::Br; }

Range usable(Range r) {
  if (r.min < r.max) return r;
  if (r.min != 0.0f) return {std::min(r.min, 0.0f), std::max(r.max, 0.0f)};
  return {-1.0f, 1.0f};
}

void Moments::add(const float* rows, int64_t count, int64_t d) {
  if (sum.empty()) {
    sum.assign(static_cast<size_t>(d), 0.0);
    sum_outer.assign(static_cast<size_t>(d * d), 0.0);
  }
  for (int64_t r = 0; r < count; ++r) {
    const float* v = rows + r * d;
    for (int64_t i = 0; i < d; ++i) {
      const double vi = v[i];
      sum[i] += vi;
      if (vi == 0.0) continue;
      double* row = &sum_outer[static_cast<size_t>(i * d)];
      for (int64_t j = i; j < d; ++j) row[j] += vi * static_cast<double>(v[j]);
    }
  }
  n += count;
}

std::vector<double> Moments::second_moment() const {
  const int64_t d = static_cast<int64_t>(sum.size());
  std::vector<double> m(sum_outer.size());
  const double inv = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = i; j < d; ++j) m[i * d + j] = m[j * d + i] = sum_outer[i * d + j] * inv;
  return m;
}

std::vector<double> Moments::mean() const {
  std::vector<double> m(sum);
  for (double& v : m) v = n > 0 ? v / static_cast<double>(n) : 0.0;
  return m;
}

}  // namespace ptq_detail

namespace {

ObserverConfig observer_config(const GruPtqOptions& o, CalibMethod m) {
  ObserverConfig oc;
  oc.method = m;
  oc.ema_decay = o.ema_decay;
  oc.percentile = o.percentile;
  oc.bins = o.bins;
  return oc;
}

}  // namespace

GruPtq::GruPtq(const GruModel& model, const GruPtqOptions& options) : impl_(std::make_unique<Impl>()) {
  model.validate();
  options.validate();
  impl_->model = &model;
  impl_->options = options;
  const size_t cells = model.cells.size();
  impl_->observers.resize(cells);
  for (size_t c = 0; c < cells; ++c) {
    impl_->observers[c].resize(kGruOpCount);
    for (int i = 0; i < kGruOpCount; ++i) {
      const GruOp op = static_cast<GruOp>(i);
      if (ptq_detail::is_parameter(op) || (op == GruOp::X && c % static_cast<size_t>(model.directions()) != 0)) continue;
      for (CalibMethod m : kMethods) impl_->observers[c][static_cast<size_t>(i)].emplace_back(observer_config(options, m));
    }
  }
  impl_->x_moments.resize(cells);
  impl_->h_moments.resize(cells);
}

GruPtq::~GruPtq() = default;
GruPtq::GruPtq(GruPtq&&) noexcept = default;
GruPtq& GruPtq::operator=(GruPtq&&) noexcept = default;

int64_t GruPtq::batches() const { return impl_->batches; }
const GruPtqOptions& GruPtq::options() const { return impl_->options; }

void GruPtq::observe(const float* x, const Shape& x_shape, const GruRunOptions& options) {
  Impl& m = *impl_;
  const GruModel& model = *m.model;
  const int dirs = model.directions();
  GruRunOptions opt = options;
  GruTap tap;
  tap.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* values, const Shape& shape) {
    if (op == GruOp::X && direction != 0) return;  // both directions read the same input
    if (shape.empty() || numel(shape) == 0) return;
    const size_t c = static_cast<size_t>(layer * dirs + direction);
    for (Observer& o : m.observers[c][static_cast<size_t>(op)]) o.observe(values, shape);
    if (op == GruOp::X) m.x_moments[c].add(values, shape[0], shape[1]);
    if (op == GruOp::H) m.h_moments[c].add(values, shape[0], shape[1]);
  };
  opt.tap = &tap;
  gru_forward(model, x, x_shape, opt);  // validates everything before the first tap call
  ++m.batches;
  {
    const std::lock_guard<std::mutex> lock(m.cache_mutex);
    m.range_cache.clear();
  }

  // Keep the batch (time-major) for the searches while it fits; the first one in part.
  const int64_t T = opt.batch_first ? x_shape[1] : x_shape[0], B = opt.batch_first ? x_shape[0] : x_shape[1];
  const int64_t C = x_shape[2];
  const int64_t room = m.options.max_search_steps - m.kept_steps;
  int64_t items = T > 0 ? std::min<int64_t>(B, room / T) : B;
  if (m.kept.empty() && items == 0 && B > 0) items = 1;
  if (items <= 0 || T == 0) return;
  KeptBatch k;
  k.shape = {T, items, C};
  k.x.resize(static_cast<size_t>(T * items * C));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < items; ++b) {
      const float* src = x + (opt.batch_first ? (b * T + t) : (t * B + b)) * C;
      std::memcpy(&k.x[static_cast<size_t>((t * items + b) * C)], src, sizeof(float) * static_cast<size_t>(C));
    }
  if (!options.lengths.empty()) k.lengths.assign(options.lengths.begin(), options.lengths.begin() + items);
  if (options.h0 != nullptr) {
    const int64_t H = model.hidden_size;
    for (size_t c = 0; c < model.cells.size(); ++c)
      k.h0.insert(k.h0.end(), options.h0 + static_cast<int64_t>(c) * B * H, options.h0 + static_cast<int64_t>(c) * B * H + items * H);
  }
  m.kept.push_back(std::move(k));
  m.kept_steps += T * items;
}

QuantParams GruPtq::Impl::op_params(size_t c, GruOp op, const GruQuantConfig& config, CalibMethod method) const {
  const size_t mi = static_cast<size_t>(std::find(kMethods.begin(), kMethods.end(), method) - kMethods.begin());
  const size_t dirs = static_cast<size_t>(model->directions());
  const size_t src = op == GruOp::X ? c - c % dirs : c;
  if (!gru_op_used(op, model->cell_kind)) {
    // An operator the cell does not have (fixq/gru.h): the all-zero slot's placeholder, as
    // GruCalibrator gives it.
    const Range none = usable({0.0f, 0.0f});
    return params_from_ranges(gru_op_scheme(op, config), Shape{1}, std::span<const Range>(&none, 1));
  }
  const Observer& obs = observers[src][static_cast<size_t>(op)][mi];
  require(obs.batches() > 0, "GRU calibration: operator ", to_string(op), " of cell ", src,
          " saw no data (every sequence empty?)");
  const QuantScheme s = gru_op_scheme(op, config);
  const auto key = std::make_tuple(src, static_cast<int>(op), static_cast<int>(mi), s.format.bits, static_cast<int>(s.scale_kind));
  std::vector<Range> r;
  {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    const auto it = range_cache.find(key);
    if (it != range_cache.end()) r = it->second;
  }
  if (r.empty()) {
    r = obs.ranges(s);
    for (Range& x : r) x = usable(x);
    const std::lock_guard<std::mutex> lock(cache_mutex);
    range_cache[key] = r;
  }
  return params_from_ranges(s, Shape{1}, r);
}

GruQuantParams GruPtq::Impl::from_method(const GruModel& rounded, const GruQuantConfig& config, CalibMethod method) const {
  GruQuantParams p;
  p.config = config;
  for (size_t c = 0; c < model->cells.size(); ++c) {
    const GruCell& cell = model->cells[c];
    const GruCell& rcell = rounded.cells[c];
    GruCellParams cp;
    for (int i = 0; i < kGruOpCount; ++i) {
      const GruOp op = static_cast<GruOp>(i);
      if (!ptq_detail::is_parameter(op)) cp[op] = op_params(c, op, config, method);
    }
    // The weights' steps come from the float model, the biases' from the corrected biases.
    const int64_t h3 = 3 * cell.hidden_size;
    cp[GruOp::W] = gru_parameter_params(GruOp::W, config, cell.W, h3);
    cp[GruOp::R] = gru_parameter_params(GruOp::R, config, cell.R, h3);
    cp[GruOp::Bx] = gru_parameter_params(GruOp::Bx, config, rcell.bx, h3);
    cp[GruOp::Br] = gru_parameter_params(GruOp::Br, config, rcell.br, h3);
    p.cells.push_back(std::move(cp));
  }
  return p;
}

namespace {

// Integer weights of one matrix [3H, n] under its per-row parameters.
std::vector<int32_t> round_matrix(const std::vector<float>& w, int64_t rows, const QuantParams& p, const Moments& moments,
                                  const GruPtqOptions& o) {
  const int64_t cols = static_cast<int64_t>(w.size()) / rows;
  if (o.rounding == WeightRounding::Gptq && moments.n > 0)
    return gptq_round(w, rows, cols, moments.second_moment(), p.scale, p.scheme.format.qmin(), p.scheme.format.qmax(),
                      o.gptq_damp);
  std::vector<int32_t> q(w.size());
  quantize(w.data(), Shape{rows, cols}, p, q.data());
  return q;
}

// The rounded weights as floats that quantize() maps back to exactly those integers:
// fl32(q * s) / s is within |q| 2^-23 < 1/2 of q, so it rounds to q.
std::vector<float> on_grid(const std::vector<int32_t>& q, int64_t rows, const QuantParams& p) {
  const int64_t cols = static_cast<int64_t>(q.size()) / rows;
  std::vector<float> w(q.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) w[r * cols + k] = dequantize_value(q[r * cols + k], p.scale[r], 0);
  return w;
}

// bias -= (W_q - W) mean: the expected error the rounding adds to each row's output.
void correct_bias(std::vector<float>& bias, const std::vector<float>& w, const std::vector<float>& wq,
                  const std::vector<double>& mean) {
  const int64_t cols = static_cast<int64_t>(mean.size()), rows = static_cast<int64_t>(bias.size());
  for (int64_t r = 0; r < rows; ++r) {
    double e = 0.0;
    for (int64_t k = 0; k < cols; ++k)
      e += (static_cast<double>(wq[r * cols + k]) - static_cast<double>(w[r * cols + k])) * mean[k];
    bias[r] = static_cast<float>(static_cast<double>(bias[r]) - e);
  }
}

}  // namespace

GruModel GruPtq::Impl::round_and_correct(const GruQuantConfig& config) const {
  GruModel out = *model;
  const int dirs = model->directions();
  const bool rounds = options.rounding != WeightRounding::Nearest;
  if (!rounds && !options.bias_correction) return out;
  for (size_t c = 0; c < out.cells.size(); ++c) {
    GruCell& cell = out.cells[c];
    const GruCell& orig = model->cells[c];
    const int64_t h3 = 3 * cell.hidden_size;
    const Moments& xm = x_moments[c - c % static_cast<size_t>(dirs)];
    const Moments& hm = h_moments[c];
    const QuantParams pw = gru_parameter_params(GruOp::W, config, orig.W, h3);
    const QuantParams pr = gru_parameter_params(GruOp::R, config, orig.R, h3);
    const std::vector<float> wq = on_grid(round_matrix(orig.W, h3, pw, xm, options), h3, pw);
    const std::vector<float> rq = on_grid(round_matrix(orig.R, h3, pr, hm, options), h3, pr);
    if (options.bias_correction) {
      if (xm.n > 0) correct_bias(cell.bx, orig.W, wq, xm.mean());
      if (hm.n > 0) correct_bias(cell.br, orig.R, rq, hm.mean());
    }
    if (rounds) {
      cell.W = wq;
      cell.R = rq;
    }
  }
  out.validate();
  return out;
}

GruPtqResult GruPtq::quantize(const GruQuantConfig& config) const {
  const Impl& m = *impl_;
  config.validate();
  require(m.batches > 0, "GRU calibration: no data observed; call observe() with calibration sequences first");
  GruPtqResult res;
  res.model = m.round_and_correct(config);
  const ptq_detail::OutputError error(*m.model, m.kept);
  const size_t cells = m.model->cells.size();
  std::vector<std::array<ptq_detail::OpChoice, kGruOpCount>> choices(cells);
  if (m.options.method) {
    res.params = m.from_method(res.model, config, *m.options.method);
    for (auto& cell : choices)
      for (auto& ch : cell) ch.method = *m.options.method;
  } else {
    std::array<GruQuantParams, kMethods.size()> by_method;
    for (size_t i = 0; i < kMethods.size(); ++i) by_method[i] = m.from_method(res.model, config, kMethods[i]);
    res.params = ptq_detail::search_ranges(res.model, config, by_method, error, m.options.search_sweeps, choices);
  }
  res.choices.resize(cells);
  for (size_t c = 0; c < cells; ++c)
    for (int i = 0; i < kGruOpCount; ++i)
      res.choices[c][static_cast<size_t>(i)] =
          ptq_detail::is_parameter(static_cast<GruOp>(i)) ? "minmax" : choices[c][static_cast<size_t>(i)].describe();
  res.calib_mse = error(res.model, res.params, &res.calib_cosine);
  return res;
}

}  // namespace fixq
