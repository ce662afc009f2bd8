// ModelStream: the float graph one frame at a time, the same node functions as
// model_forward over T = 1 with every Conv1d's history and every GRU's state carried.
#include <cmath>

#include "fixq/error.h"
#include "model/float_graph.h"
#include "model/float_ops.h"
#include "model/layout.h"
#include "model/stream_frames.h"

namespace fixq {

using namespace model_detail;

struct ModelStream::Impl {
  const Model* model = nullptr;
  int64_t batch = 0;
  FloatGraphState state;
  std::vector<std::vector<float>> initial;  // per graph input: a State input's values (empty: zeros)
};

ModelStream::ModelStream(const Model& model, int64_t batch, const std::vector<ModelArray>& initial_states)
    : impl_(std::make_unique<Impl>()) {
  model.validate();
  require(batch >= 1, "ModelStream: batch must be >= 1, got ", batch);
  require(initial_states.empty() || initial_states.size() == model.inputs.size(), "ModelStream: ",
          initial_states.size(), " initial states given; pass none or one entry per graph input (",
          model.inputs.size(), ")");
  Impl& m = *impl_;
  m.model = &model;
  m.batch = batch;
  std::vector<std::vector<float>> state_of_value(model.values.size());
  for (size_t i = 0; i < initial_states.size(); ++i) {
    const ModelValue& v = model.values[static_cast<size_t>(model.inputs[i])];
    if (v.kind != ValueKind::State) continue;
    check_state_input(v, initial_states[i], batch);
    for (float x : initial_states[i].data) require(std::isfinite(x), input_name(v), ": initial state must be finite");
    state_of_value[static_cast<size_t>(model.inputs[i])] = initial_states[i].data;
  }
  m.state.conv_hist.resize(model.nodes.size());
  m.state.gru.resize(model.nodes.size());
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const ModelNode& node = model.nodes[n];
    if (node.op == ModelOp::Conv1d)
      m.state.conv_hist[n].assign(static_cast<size_t>(batch * conv_history_frames(node) * node.in_features), 0.0f);
    if (node.op == ModelOp::Gru) {
      require(!node.gru->bidirectional, "ModelStream: GRU '", node.name,
              "' is bidirectional; its reverse direction needs the whole sequence (use model_forward)");
      const std::vector<float>* h0 = node.inputs[1] >= 0 ? &state_of_value[static_cast<size_t>(node.inputs[1])] : nullptr;
      m.state.gru[n] = std::make_unique<GruStream>(*node.gru, batch, h0 && !h0->empty() ? h0->data() : nullptr);
    }
  }
}

ModelStream::~ModelStream() = default;
ModelStream::ModelStream(ModelStream&&) noexcept = default;
ModelStream& ModelStream::operator=(ModelStream&&) noexcept = default;
int64_t ModelStream::batch() const { return impl_->batch; }

std::vector<ModelArray> ModelStream::step(const std::vector<ModelArray>& frames) {
  Impl& m = *impl_;
  const Model& model = *m.model;
  const int64_t B = m.batch;
  std::vector<std::vector<float>> vals(model.values.size());
  require(frames.size() == model.inputs.size(), "ModelStream::step: ", frames.size(), " frames given, the model has ",
          model.inputs.size(), " inputs");
  for (size_t i = 0; i < frames.size(); ++i) {
    const ModelValue& v = model.values[static_cast<size_t>(model.inputs[i])];
    if (v.kind != ValueKind::Sequence) continue;
    check_frame_shape(v, frames[i].shape, frames[i].data.size(), B, "ModelStream::step: frame of " + input_name(v));
    for (size_t k = 0; k < frames[i].data.size(); ++k)
      if (!std::isfinite(frames[i].data[k]))
        fail("ModelStream::step: frame of ", input_name(v), " element ", k, " is ", frames[i].data[k], ": inputs must be finite");
    vals[static_cast<size_t>(model.inputs[i])] = frames[i].data;
  }
  run_float_graph(model, vals, B, 1, &m.state, nullptr);
  std::vector<ModelArray> out;
  for (int v : model.outputs) {
    const ModelValue& mv = model.values[static_cast<size_t>(v)];
    std::vector<float>& data = vals[static_cast<size_t>(v)];
    if (mv.kind == ValueKind::State) {
      if (data.empty()) data.assign(static_cast<size_t>(mv.rows * B * mv.features), 0.0f);
      out.push_back({{mv.rows, B, mv.features}, std::move(data)});
    } else {
      out.push_back({{B, mv.features}, std::move(data)});
    }
  }
  return out;
}

}  // namespace fixq
