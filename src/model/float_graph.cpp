// The float graph executor: one function per node kind, run in the graph's order.
#include "model/float_graph.h"

#include <cmath>
#include <cstring>

#include "fixq/error.h"
#include "model/float_ops.h"
#include "model/layout.h"

namespace fixq::model_detail {

void check_state_input(const ModelValue& v, const ModelArray& a, int64_t B) {
  if (a.shape.empty() && a.data.empty()) return;
  const Shape want{v.rows, B, v.features};
  require(a.shape == want, input_name(v), " (a state, layout SBH) must be ", shape_str(want), ", got ", shape_str(a.shape));
}

std::vector<std::vector<float>> read_float_inputs(const Model& model, const std::vector<ModelArray>& inputs,
                                                  int64_t& B, int64_t& T) {
  require(inputs.size() == model.inputs.size(), "model: ", inputs.size(), " inputs given, the model has ",
          model.inputs.size());
  std::vector<std::vector<float>> vals(model.values.size());
  B = -1;
  T = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ModelValue& v = model.values[static_cast<size_t>(model.inputs[i])];
    if (v.kind != ValueKind::Sequence) continue;
    const SeqDims d = sequence_dims(v, inputs[i].shape, input_name(v));
    require(B < 0 || (d.B == B && d.T == T), input_name(v), " has B = ", d.B, ", T = ", d.T,
            "; an earlier input has B = ", B, ", T = ", T);
    B = d.B;
    T = d.T;
  }
  require(B >= 1, "model: the batch must be >= 1, got ", B);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ModelValue& v = model.values[static_cast<size_t>(model.inputs[i])];
    const ModelArray& a = inputs[i];
    if (v.kind == ValueKind::State) {
      check_state_input(v, a, B);
      if (a.shape.empty() && a.data.empty()) continue;  // zeros
    }
    require(static_cast<int64_t>(a.data.size()) == numel(a.shape), input_name(v), " has ", a.data.size(),
            " values for shape ", shape_str(a.shape));
    for (size_t k = 0; k < a.data.size(); ++k)
      if (!std::isfinite(a.data[k])) fail(input_name(v), " element ", k, " is ", a.data[k], ": inputs must be finite");
    vals[static_cast<size_t>(model.inputs[i])] =
        v.kind == ValueKind::Sequence ? to_internal(v, a.data, B, T) : a.data;
  }
  return vals;
}

namespace {

void run_gru(const ModelNode& node, std::vector<std::vector<float>>& vals, int64_t B, int64_t T,
             std::unique_ptr<GruStream>* stream, int node_index, const ModelTap* tap) {
  const GruModel& g = *node.gru;
  const std::vector<float>& x = vals[static_cast<size_t>(node.inputs[0])];
  const float* h0 = nullptr;
  if (node.inputs[1] >= 0 && !vals[static_cast<size_t>(node.inputs[1])].empty()) h0 = vals[static_cast<size_t>(node.inputs[1])].data();
  std::vector<float>& y = vals[static_cast<size_t>(node.outputs[0])];
  if (tap && tap->on_gru_input) tap->on_gru_input(node_index, x.data(), {B, T, g.input_size}, h0);
  if (stream == nullptr) {
    GruRunOptions opt;
    opt.batch_first = true;
    opt.h0 = h0;
    GruOutput out = gru_forward(g, x.data(), {B, T, g.input_size}, opt);
    y = std::move(out.y);
    if (node.outputs[1] >= 0) vals[static_cast<size_t>(node.outputs[1])] = std::move(out.h_n);
    return;
  }
  y.resize(static_cast<size_t>(B * g.hidden_size));
  (*stream)->step(x.data(), y.data());
  if (node.outputs[1] >= 0) vals[static_cast<size_t>(node.outputs[1])] = (*stream)->state();
}

}  // namespace

void run_float_graph(const Model& model, std::vector<std::vector<float>>& vals, int64_t B, int64_t T,
                     FloatGraphState* state, const ModelTap* tap) {
  auto report = [&](int v) {
    if (!tap || !tap->on_value || v < 0) return;
    const ModelValue& mv = model.values[static_cast<size_t>(v)];
    if (vals[static_cast<size_t>(v)].empty()) return;  // a State input given as zeros
    const Shape s = mv.kind == ValueKind::State ? Shape{mv.rows, B, mv.features} : Shape{B, T, mv.features};
    tap->on_value(v, vals[static_cast<size_t>(v)].data(), s);
  };
  for (int v : model.inputs) report(v);
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const ModelNode& node = model.nodes[n];
    auto in = [&](size_t i) -> const std::vector<float>& { return vals[static_cast<size_t>(node.inputs[i])]; };
    std::vector<float>& y = vals[static_cast<size_t>(node.outputs[0])];
    const int64_t C = model.values[static_cast<size_t>(node.outputs[0])].features;
    const int64_t rows = B * T;
    if (node.op != ModelOp::Gru) y.assign(static_cast<size_t>(rows * C), 0.0f);
    switch (node.op) {
      case ModelOp::Linear: linear_f32(node, in(0).data(), rows, y.data()); break;
      case ModelOp::Conv1d: {
        const int64_t P = conv_history_frames(node);
        if (state == nullptr) {
          const std::vector<float> zeros(static_cast<size_t>(B * P * node.in_features), 0.0f);
          conv1d_f32(node, in(0).data(), B, T, zeros.data(), y.data());
        } else {
          std::vector<float>& h = state->conv_hist[n];
          conv1d_f32(node, in(0).data(), B, T, h.data(), y.data());
          push_history(h, in(0).data(), B, T, P, node.in_features);
        }
        break;
      }
      case ModelOp::Gru:
        run_gru(node, vals, B, T, state ? &state->gru[n] : nullptr, static_cast<int>(n), tap);
        break;
      case ModelOp::Add:
        for (int64_t i = 0; i < rows * C; ++i) y[static_cast<size_t>(i)] = in(0)[static_cast<size_t>(i)] + in(1)[static_cast<size_t>(i)];
        break;
      case ModelOp::Mul:
        for (int64_t i = 0; i < rows * C; ++i) y[static_cast<size_t>(i)] = in(0)[static_cast<size_t>(i)] * in(1)[static_cast<size_t>(i)];
        break;
      case ModelOp::Tanh:
      case ModelOp::Sigmoid:
      case ModelOp::Relu: unary_f32(node.op, in(0).data(), rows * C, y.data()); break;
      case ModelOp::Softmax: softmax_f32(in(0).data(), rows, C, y.data()); break;
      case ModelOp::Concat: {
        int64_t off = 0;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          const int64_t ci = model.values[static_cast<size_t>(node.inputs[i])].features;
          for (int64_t r = 0; r < rows; ++r)
            std::memcpy(y.data() + r * C + off, in(i).data() + r * ci, sizeof(float) * static_cast<size_t>(ci));
          off += ci;
        }
        break;
      }
      case ModelOp::Slice: {
        const int64_t ci = model.values[static_cast<size_t>(node.inputs[0])].features;
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(y.data() + r * C, in(0).data() + r * ci + node.begin, sizeof(float) * static_cast<size_t>(C));
        break;
      }
    }
    for (int v : node.outputs) report(v);
  }
}

}  // namespace fixq::model_detail
