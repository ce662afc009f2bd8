// QuantizedModel::quantize: the float reference over the calibration batches, one Observer
// per value and one GruPtq per GRU, then every value's parameters (docs/spec.md 10.2) and
// every node's integer weights, then assemble().
#include <algorithm>
#include <cmath>

#include "fixq/error.h"
#include "fixq/gru_ptq.h"
#include "model/quantized.h"

namespace fixq {

using model_detail::QNode;

void ModelQuantConfig::validate() const {
  require(preset == "int8" || preset == "int16", "model quantization preset must be int8 or int16, got '", preset, "'");
  observer.validate();
  require(!observer.per_channel, "model quantization: activations are per tensor; the observer must not be per_channel");
}

namespace {

ModelValueQuant from_params(const std::string& name, const QuantParams& p) {
  return {name, p.scheme.format.bits, {p.scale[0]}, {p.zero_point[0]}};
}

// A value's per-tensor parameters from its observed range (never zero width: a constant
// value is widened to contain 0 and, when 0 itself, given [-1, 1]).
ModelValueQuant from_range(const std::string& name, Range r, int bits, ScaleKind kind) {
  r.min = std::min(r.min, 0.0f);
  r.max = std::max(r.max, 0.0f);
  if (r.min == r.max) r = {-1.0f, 1.0f};
  const QuantScheme s = QuantScheme::make(bits, true, Symmetry::Asymmetric, kind, Granularity::PerTensor);
  return from_params(name, params_from_ranges(s, {1}, std::span<const Range>(&r, 1)));
}

ModelValueQuant fixed_range(const std::string& name, float lo, float hi, int bits, ScaleKind kind) {
  return from_range(name, {lo, hi}, bits, kind);
}

// Weights int8 symmetric per output row; a row of zeros gets [-1, 1].
void quantize_weights(const ModelNode& node, QNode& q, const ModelValueQuant& x, ScaleKind kind) {
  const int64_t N = node.out_features;
  const int64_t per_row = static_cast<int64_t>(node.weight.size()) / N;
  std::vector<Range> ranges;
  for (int64_t o = 0; o < N; ++o) {
    float m = 0.0f;
    for (int64_t k = 0; k < per_row; ++k) m = std::max(m, std::abs(node.weight[static_cast<size_t>(o * per_row + k)]));
    if (m == 0.0f) m = 1.0f;
    ranges.push_back({-m, m});
  }
  const QuantScheme s = QuantScheme::make(8, true, Symmetry::Symmetric, kind, Granularity::PerChannel, 0);
  const QuantParams p = params_from_ranges(s, {N, per_row}, ranges);
  q.w_scale = p.scale;
  q.q_w.resize(node.weight.size());
  for (int64_t o = 0; o < N; ++o)
    for (int64_t k = 0; k < per_row; ++k) {
      const auto i = static_cast<size_t>(o * per_row + k);
      q.q_w[i] = quantize_value(node.weight[i], p.scale[static_cast<size_t>(o)], 0, {-128, 127});
    }
  q.q_b.clear();
  for (size_t o = 0; o < node.bias.size(); ++o)
    q.q_b.push_back(static_cast<int32_t>(
        round_half_even_saturate(double(node.bias[o]) / (double(x.scale[0]) * p.scale[o]), INT32_MIN, INT32_MAX)));
}

}  // namespace

QuantizedModel QuantizedModel::quantize(const Model& model, const std::vector<std::vector<ModelArray>>& calib_batches,
                                        const ModelQuantConfig& config) {
  model.validate();
  config.validate();
  require(!calib_batches.empty(), "model quantization: no calibration batches");
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  m.model = model;
  m.preset = config.preset;
  m.scales = config.scales;
  m.bits = config.preset == "int16" ? 16 : 8;
  const size_t nv = model.values.size(), nn = model.nodes.size();

  std::vector<std::optional<Observer>> obs(nv);
  for (size_t v = 0; v < nv; ++v)
    if (model.values[v].kind == ValueKind::Sequence) obs[v].emplace(config.observer);
  std::vector<std::unique_ptr<GruPtq>> ptq(nn);
  for (size_t n = 0; n < nn; ++n)
    if (model.nodes[n].op == ModelOp::Gru) ptq[n] = std::make_unique<GruPtq>(*model.nodes[n].gru, GruPtqOptions{});
  ModelTap tap;
  tap.on_value = [&](int v, const float* data, const Shape& shape) {
    if (obs[static_cast<size_t>(v)]) obs[static_cast<size_t>(v)]->observe(data, shape);
  };
  tap.on_gru_input = [&](int n, const float* x, const Shape& shape, const float* h0) {
    GruRunOptions opt;
    opt.batch_first = true;
    opt.h0 = h0;
    ptq[static_cast<size_t>(n)]->observe(x, shape, opt);
  };
  for (const auto& batch : calib_batches) model_forward(model, batch, tap);

  const QuantScheme act = QuantScheme::make(m.bits, true, Symmetry::Asymmetric, m.scales, Granularity::PerTensor);
  m.vq.assign(nv, {});
  std::vector<bool> known(nv, false);
  auto observed = [&](int v) {
    const Range r = obs[static_cast<size_t>(v)]->ranges(act)[0];
    m.vq[static_cast<size_t>(v)] = from_range(model.values[static_cast<size_t>(v)].name, r, m.bits, m.scales);
    known[static_cast<size_t>(v)] = true;
  };
  auto set = [&](int v, ModelValueQuant q) {
    q.name = model.values[static_cast<size_t>(v)].name;
    m.vq[static_cast<size_t>(v)] = std::move(q);
    known[static_cast<size_t>(v)] = true;
  };
  for (int v : model.inputs)
    if (model.values[static_cast<size_t>(v)].kind == ValueKind::Sequence) observed(v);
  m.qn.assign(nn, {});
  const GruQuantConfig gru_config = GruQuantConfig::base(config.preset, config.scales, "preset");
  for (size_t n = 0; n < nn; ++n) {
    const ModelNode& node = model.nodes[n];
    QNode& q = m.qn[n];
    const int y = node.outputs[0];
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d:
        quantize_weights(node, q, m.vq[static_cast<size_t>(node.inputs[0])], m.scales);
        observed(y);
        break;
      case ModelOp::Add:
      case ModelOp::Mul:
      case ModelOp::Concat: observed(y); break;
      case ModelOp::Tanh: set(y, fixed_range("", -1.0f, 1.0f, m.bits, m.scales)); break;
      case ModelOp::Sigmoid: set(y, fixed_range("", 0.0f, 1.0f, m.bits, m.scales)); break;
      case ModelOp::Relu:
      case ModelOp::Slice: set(y, m.vq[static_cast<size_t>(node.inputs[0])]); break;
      case ModelOp::Softmax:
        set(y, m.bits == 16 ? ModelValueQuant{"", 16, {0x1p-15f}, {0}} : ModelValueQuant{"", 8, {0x1p-8f}, {-128}});
        break;
      case ModelOp::Gru: {
        GruPtqResult r = ptq[n]->quantize(gru_config);
        q.gru = std::make_shared<const QuantizedGru>(r.model, r.params);
        const GruModel& g = *node.gru;
        const size_t top = static_cast<size_t>((g.num_layers - 1) * g.directions());
        set(y, from_params("", r.params.cells[top][GruOp::H]));
        // Initial and final states: row c in cell c's h parameters.
        ModelValueQuant st{"", 0, {}, {}};
        for (const GruCellParams& c : r.params.cells) {
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
  return QuantizedModel(std::move(impl));
}

}  // namespace fixq
