// Whole-model quantization, the common part: the calibration run (observers, input
// statistics of Linear / Conv1d, GRU PTQ), and a plan (every value's bits and range) made
// into an integer model and scored on the kept calibration batches.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fixq/error.h"
#include "metrics/error_sums.h"
#include "model/float_graph.h"
#include "model/quant_state.h"

namespace fixq::model_detail {

namespace {

// Calibration batches kept for the output-error searches, in frames times batch (as
// GruPtqOptions::max_search_steps: batches are kept whole while they fit).
constexpr int64_t kMaxSearchRows = int64_t{1} << 14;

ObserverConfig method_config(const ObserverConfig& base, size_t k) {
  if (k == 0) return base;
  ObserverConfig c = base;
  c.method = ptq_detail::kMethods[k - 1];
  return c;
}

bool dense(ModelOp op) { return op == ModelOp::Linear || op == ModelOp::Conv1d; }

QuantScheme activation(int bits, ScaleKind kind) {
  return QuantScheme::make(bits, true, Symmetry::Asymmetric, kind, Granularity::PerTensor);
}

ModelValueQuant from_params(const std::string& name, const QuantParams& p) {
  return {name, p.scheme.format.bits, {p.scale[0]}, {p.zero_point[0]}};
}

}  // namespace

std::string observer_name(const ModelQuantConfig& config, size_t k) {
  return k == 0 ? "observer " + to_string(config.observer.method) : to_string(ptq_detail::kMethods[k - 1]);
}

ModelValueQuant value_params(const std::string& name, Range r, int bits, ScaleKind kind) {
  r.min = std::min(r.min, 0.0f);
  r.max = std::max(r.max, 0.0f);
  if (r.min == r.max) r = {-1.0f, 1.0f};
  return from_params(name, params_from_ranges(activation(bits, kind), {1}, std::span<const Range>(&r, 1)));
}

Calibration calibrate(const Model& model, const std::vector<std::vector<ModelArray>>& batches,
                      const ModelQuantConfig& config) {
  Calibration cal;
  cal.model = &model;
  cal.config = config;
  const size_t nv = model.values.size(), nn = model.nodes.size();
  cal.observers.resize(nv);
  for (size_t v = 0; v < nv; ++v)
    if (model.values[v].kind == ValueKind::Sequence)
      for (size_t k = 0; k < kObservers; ++k) cal.observers[v].emplace_back(method_config(config.observer, k));
  cal.dense.resize(nn);
  cal.gru.resize(nn);
  std::vector<std::vector<size_t>> dense_readers(nv);
  for (size_t n = 0; n < nn; ++n) {
    const ModelNode& node = model.nodes[n];
    if (node.op == ModelOp::Gru) cal.gru[n] = std::make_unique<GruPtq>(*node.gru, GruPtqOptions{});
    if (dense(node.op) && (config.rounding == WeightRounding::Gptq || config.bias_correction))
      dense_readers[static_cast<size_t>(node.inputs[0])].push_back(n);
  }
  ModelTap tap;
  tap.on_value = [&](int v, const float* data, const Shape& shape) {
    for (Observer& o : cal.observers[static_cast<size_t>(v)]) o.observe(data, shape);
    for (size_t n : dense_readers[static_cast<size_t>(v)]) observe_dense(model.nodes[n], data, shape[0], shape[1], cal.dense[n]);
  };
  tap.on_gru_input = [&](int n, const float* x, const Shape& shape, const float* h0) {
    GruRunOptions opt;
    opt.batch_first = true;
    opt.h0 = h0;
    cal.gru[static_cast<size_t>(n)]->observe(x, shape, opt);
  };
  int64_t kept_rows = 0;
  for (const auto& batch : batches) {
    int64_t B = 0, T = 0;
    std::vector<std::vector<float>> vals = read_float_inputs(model, batch, B, T);
    run_float_graph(model, vals, B, T, nullptr, &tap);
    if (!cal.kept.empty() && kept_rows + B * T > kMaxSearchRows) continue;
    kept_rows += B * T;
    std::vector<ModelArray> in, ref;
    for (int v : model.inputs) {
      const ModelValue& mv = model.values[static_cast<size_t>(v)];
      const Shape s = mv.kind == ValueKind::State ? Shape{mv.rows, B, mv.features} : Shape{B, T, mv.features};
      in.push_back({vals[static_cast<size_t>(v)].empty() ? Shape{} : s, vals[static_cast<size_t>(v)]});
    }
    for (int v : model.outputs) ref.push_back({{B, T}, vals[static_cast<size_t>(v)]});
    cal.kept.push_back(std::move(in));
    cal.reference.push_back(std::move(ref));
  }
  return cal;
}

bool free_range(const Model& model, int v) {
  const ModelValue& mv = model.values[static_cast<size_t>(v)];
  if (mv.kind != ValueKind::Sequence) return false;
  if (std::find(model.inputs.begin(), model.inputs.end(), v) != model.inputs.end()) return true;
  for (const ModelNode& n : model.nodes)
    if (n.outputs[0] == v)
      return dense(n.op) || n.op == ModelOp::Add || n.op == ModelOp::Mul || n.op == ModelOp::Concat;
  return false;
}

bool chosen_bits(const Model& model, int v) {
  if (free_range(model, v)) return true;
  for (const ModelNode& n : model.nodes)
    if (n.outputs[0] == v) return n.op == ModelOp::Tanh || n.op == ModelOp::Sigmoid || n.op == ModelOp::Gru;
  return false;
}

int model_gemm_bits(const Model& model, const std::vector<int>& value_bits) {
  for (const ModelNode& n : model.nodes)
    if (dense(n.op) && (value_bits[static_cast<size_t>(n.inputs[0])] > 8 || value_bits[static_cast<size_t>(n.outputs[0])] > 8))
      return 16;
  return 8;
}

Builder::Builder(const Calibration& cal) : cal_(&cal), dense_(cal.model->nodes.size()) {
  for (size_t n = 0; n < cal.model->nodes.size(); ++n)
    if (dense(cal.model->nodes[n].op)) dense_[n] = round_dense(cal.model->nodes[n], cal.dense[n], cal.config);
}

std::shared_ptr<const GruPtqResult> Builder::gru_result(size_t node, int bits) const {
  auto& slot = gru_[{node, bits}];
  if (!slot)
    slot = std::make_shared<const GruPtqResult>(
        cal_->gru[node]->quantize(GruQuantConfig::base(bits == 16 ? "int16" : "int8", cal_->config.scales, "preset")));
  return slot;
}

ModelValueQuant Builder::free_params(const Plan& plan, int v) const {
  return value_params(cal_->model->values[static_cast<size_t>(v)].name, plan.range[static_cast<size_t>(v)],
                      plan.bits[static_cast<size_t>(v)], cal_->config.scales);
}

std::unique_ptr<QuantizedModel::Impl> Builder::build(const Plan& plan) const {
  const Model& model = *cal_->model;
  auto impl = std::make_unique<QuantizedModel::Impl>();
  QuantizedModel::Impl& m = *impl;
  m.model = model;
  m.preset = cal_->config.preset;
  m.scales = cal_->config.scales;
  const size_t nv = model.values.size(), nn = model.nodes.size();
  // Every value's bits: the plan's, Relu and Slice their input's, Softmax the GEMMs' width
  // (which counts softmax outputs as 8 bits: at 16 it is 16 already).
  std::vector<int> bits(nv, 8);
  auto derive = [&](int softmax_bits) {
    for (size_t v = 0; v < nv; ++v)
      if (chosen_bits(model, static_cast<int>(v))) bits[v] = plan.bits[v];
    for (const ModelNode& n : model.nodes) {
      if (n.op == ModelOp::Relu || n.op == ModelOp::Slice) bits[static_cast<size_t>(n.outputs[0])] = bits[static_cast<size_t>(n.inputs[0])];
      if (n.op == ModelOp::Softmax) bits[static_cast<size_t>(n.outputs[0])] = softmax_bits;
    }
  };
  derive(8);
  m.bits = m.preset == "int16" ? 16 : m.preset == "int8" ? 8 : model_gemm_bits(model, bits);
  derive(m.bits);
  m.vq.assign(nv, {});
  m.qn.assign(nn, {});
  std::vector<bool> known(nv, false);
  auto set = [&](int v, ModelValueQuant q) {
    q.name = model.values[static_cast<size_t>(v)].name;
    m.vq[static_cast<size_t>(v)] = std::move(q);
    known[static_cast<size_t>(v)] = true;
  };
  for (int v : model.inputs)
    if (model.values[static_cast<size_t>(v)].kind == ValueKind::Sequence) set(v, free_params(plan, v));
  for (size_t n = 0; n < nn; ++n) {
    ModelNode& node = m.model.nodes[n];
    model_detail::QNode& q = m.qn[n];
    const int y = node.outputs[0];
    const int b = bits[static_cast<size_t>(y)];
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        const DenseWeights& w = dense_[n];
        q.q_w = w.q_w;
        q.w_scale = w.w_scale;
        q.q_b = dense_bias(w, m.vq[static_cast<size_t>(node.inputs[0])].scale[0]);
        // A bias added by the correction: the float graph gains zeros (the same function).
        if (node.bias.empty() && !w.bias.empty()) node.bias.assign(w.bias.size(), 0.0f);
        set(y, free_params(plan, y));
        break;
      }
      case ModelOp::Add:
      case ModelOp::Mul:
      case ModelOp::Concat: set(y, free_params(plan, y)); break;
      case ModelOp::Tanh: set(y, value_params("", {-1.0f, 1.0f}, b, m.scales)); break;
      case ModelOp::Sigmoid: set(y, value_params("", {0.0f, 1.0f}, b, m.scales)); break;
      case ModelOp::Relu:
      case ModelOp::Slice: set(y, m.vq[static_cast<size_t>(node.inputs[0])]); break;
      case ModelOp::Softmax:
        set(y, m.bits == 16 ? ModelValueQuant{"", 16, {0x1p-15f}, {0}} : ModelValueQuant{"", 8, {0x1p-8f}, {-128}});
        break;
      case ModelOp::Gru: {
        const std::shared_ptr<const GruPtqResult> r = gru_result(n, b);
        q.gru = std::make_shared<const QuantizedGru>(r->model, r->params);
        const GruModel& g = *node.gru;
        const size_t top = static_cast<size_t>((g.num_layers - 1) * g.directions());
        set(y, from_params("", r->params.cells[top][GruOp::H]));
        // Initial and final states: row c in cell c's h parameters.
        ModelValueQuant st{"", 0, {}, {}};
        for (const GruCellParams& c : r->params.cells) {
          st.bits = c[GruOp::H].scheme.format.bits;
          st.scale.push_back(c[GruOp::H].scale[0]);
          st.zero_point.push_back(c[GruOp::H].zero_point[0]);
        }
        for (int v : {node.inputs[1], node.outputs[1]}) {
          if (v < 0) continue;
          require(!known[static_cast<size_t>(v)], "model quantization: state '", model.values[static_cast<size_t>(v)].name,
                  "' is read by two GRUs; each initial state input must belong to one GRU");
          set(v, st);
        }
        break;
      }
    }
  }
  for (size_t v = 0; v < nv; ++v)
    require(known[v], "model quantization: state input '", model.values[v].name, "' is read by no GRU");
  m.assemble(nullptr);
  m.range_choice = plan.choice;
  return impl;
}

Builder::Score Builder::score(const QuantizedModel::Impl& m) const {
  const Model& model = m.model;
  std::vector<metrics_detail::ErrorSums> per(model.outputs.size());
  std::vector<float> deq;
  for (size_t k = 0; k < cal_->kept.size(); ++k) {
    const std::vector<ModelArray>& in = cal_->kept[k];
    int64_t B = 0, T = 0;
    std::vector<std::vector<int32_t>> vals(model.values.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const int v = model.inputs[i];
      const ModelValue& mv = model.values[static_cast<size_t>(v)];
      if (mv.kind == ValueKind::Sequence) B = in[i].shape[0], T = in[i].shape[1];
      if (in[i].data.empty()) continue;  // a zero state
      const ModelValueQuant& q = m.vq[static_cast<size_t>(v)];
      const size_t per_row = mv.kind == ValueKind::State ? in[i].data.size() / static_cast<size_t>(mv.rows) : in[i].data.size();
      std::vector<int32_t>& d = vals[static_cast<size_t>(v)];
      for (size_t e = 0; e < in[i].data.size(); ++e)
        d.push_back(quantize_value(in[i].data[e], q.scale[e / per_row], q.zero_point[e / per_row], {q.qmin(), q.qmax()}));
    }
    run_int_graph_in_chunks(m, vals, B, T);
    for (size_t o = 0; o < model.outputs.size(); ++o) {
      const int v = model.outputs[o];
      const ModelValue& mv = model.values[static_cast<size_t>(v)];
      const ModelValueQuant& q = m.vq[static_cast<size_t>(v)];
      const std::vector<float>& ref = cal_->reference[k][o].data;
      const std::vector<int32_t>& got = vals[static_cast<size_t>(v)];
      deq.assign(ref.size(), 0.0f);  // an empty final state: a zero state passed through
      const size_t per_row = mv.kind == ValueKind::State ? ref.size() / static_cast<size_t>(mv.rows) : ref.size();
      for (size_t e = 0; e < got.size() && e < ref.size(); ++e)
        deq[e] = dequantize_value(got[e], q.scale[e / per_row], q.zero_point[e / per_row]);
      per[o].add(ref.data(), deq.data(), ref.size());
    }
  }
  Score s;
  s.cosine = 1.0;
  for (const metrics_detail::ErrorSums& e : per) {
    if (!e.finite()) return {std::numeric_limits<double>::infinity(), -1.0};
    s.error += e.ref2 > 0.0 ? e.err2 / e.ref2 : e.err2;
    s.cosine = std::min(s.cosine, e.cosine());
  }
  return s;
}

Builder::Score Builder::score(const Plan& plan) const {
  std::unique_ptr<QuantizedModel::Impl> m;
  try {
    m = build(plan);
  } catch (const Error&) {
    return {std::numeric_limits<double>::infinity(), -1.0};  // e.g. a ratio of scales beyond 2^20
  }
  return score(*m);
}

int64_t model_work(const QuantizedModel::Impl& m) {
  const Model& model = m.model;
  int64_t w = 0;
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const ModelNode& node = model.nodes[n];
    if (dense(node.op)) {
      const int64_t macs = node.out_features * (node.in_features / node.groups) * node.kernel;
      w += m.bits > 8 ? 2 * macs : macs;
    }
    if (node.op == ModelOp::Gru) {
      w += gru_bits_cost(*node.gru, m.qn[n].gru->params().config).work();
      continue;  // its output is counted in its own work
    }
    const int64_t C = model.values[static_cast<size_t>(node.outputs[0])].features;
    w += m.vq[static_cast<size_t>(node.outputs[0])].bits > 8 ? 2 * C : C;
  }
  return w;
}

Range observer_range(const Calibration& cal, int v, int bits, size_t k) {
  const auto key = std::make_tuple(v, bits, k);
  const auto it = cal.range_cache.find(key);
  if (it != cal.range_cache.end()) return it->second;
  const Range r = cal.observers[static_cast<size_t>(v)][k].ranges(activation(bits, cal.config.scales))[0];
  cal.range_cache.emplace(key, r);
  return r;
}

Plan observer_plan(const Calibration& cal, const Plan& bits, size_t k) {
  const Model& model = *cal.model;
  Plan p = bits;
  p.range.assign(model.values.size(), {-1.0f, 1.0f});
  p.choice.assign(model.values.size(), "");
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (!free_range(model, static_cast<int>(v))) continue;
    p.range[v] = observer_range(cal, static_cast<int>(v), p.bits[v], k);
    p.choice[v] = observer_name(cal.config, k);
  }
  return p;
}

}  // namespace fixq::model_detail
