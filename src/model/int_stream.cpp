// QuantizedModelStream: the integer graph one frame at a time, run_int_graph over T = 1
// with every Conv1d's history and every GRU's integer state carried.
#include "fixq/error.h"
#include "model/int_io.h"
#include "model/int_run.h"
#include "model/layout.h"
#include "model/quantized.h"
#include "model/stream_frames.h"

namespace fixq {

using namespace model_detail;

struct QuantizedModelStream::Impl {
  const QuantizedModel* model = nullptr;
  int64_t batch = 0;
  ModelIntState state;
  // Kept from step to step, so that a step allocates only what it returns.
  std::unique_ptr<IntRun> run;
  std::vector<std::vector<int32_t>> vals;
  std::vector<std::string> frame_what;  // per graph input: how its frames' errors name it
};

QuantizedModelStream::QuantizedModelStream(const QuantizedModel& model, int64_t batch,
                                           const std::vector<ModelArray>& initial_states)
    : impl_(std::make_unique<Impl>()) {
  const QuantizedModel::Impl& m = model.impl();
  require(batch >= 1, "QuantizedModelStream: batch must be >= 1, got ", batch);
  require(initial_states.empty() || initial_states.size() == m.model.inputs.size(), "QuantizedModelStream: ",
          initial_states.size(), " initial states given; pass none or one entry per graph input (", m.model.inputs.size(), ")");
  for (const ModelNode& n : m.model.nodes)
    require(n.op != ModelOp::Gru || !n.gru->bidirectional, "QuantizedModelStream: GRU '", n.name,
            "' is bidirectional; its reverse direction needs the whole sequence (use forward)");
  std::vector<std::vector<int32_t>> vals(m.model.values.size());
  for (size_t i = 0; i < initial_states.size(); ++i) {
    const int vi = m.model.inputs[i];
    const ModelValue& v = m.model.values[static_cast<size_t>(vi)];
    const ModelArray& a = initial_states[i];
    if (v.kind != ValueKind::State || (a.shape.empty() && a.data.empty())) continue;
    const Shape want{v.rows, batch, v.features};
    require(a.shape == want && static_cast<int64_t>(a.data.size()) == numel(want), "QuantizedModelStream: ",
            input_name(v), " must be ", shape_str(want), ", got ", shape_str(a.shape));
    vals[static_cast<size_t>(vi)] = quantize_array(m, vi, a, batch, input_name(v)).data;
  }
  impl_->model = &model;
  impl_->batch = batch;
  impl_->state = initial_int_state(m, vals, batch);
  impl_->run = std::make_unique<IntRun>();
  impl_->vals.resize(m.model.values.size());
  for (int vi : m.model.inputs)
    impl_->frame_what.push_back("QuantizedModelStream::step: frame of " + input_name(m.model.values[static_cast<size_t>(vi)]));
}

QuantizedModelStream::~QuantizedModelStream() = default;
QuantizedModelStream::QuantizedModelStream(QuantizedModelStream&&) noexcept = default;
QuantizedModelStream& QuantizedModelStream::operator=(QuantizedModelStream&&) noexcept = default;
int64_t QuantizedModelStream::batch() const { return impl_->batch; }

std::vector<ModelIntArray> QuantizedModelStream::step_raw(const std::vector<ModelIntArray>& frames) {
  const QuantizedModel::Impl& m = impl_->model->impl();
  const Model& model = m.model;
  const int64_t B = impl_->batch;
  require(frames.size() == model.inputs.size(), "QuantizedModelStream::step: ", frames.size(),
          " frames given, the model has ", model.inputs.size(), " inputs");
  std::vector<std::vector<int32_t>>& vals = impl_->vals;
  for (size_t i = 0; i < frames.size(); ++i) {
    const int vi = model.inputs[i];
    const ModelValue& v = model.values[static_cast<size_t>(vi)];
    if (v.kind != ValueKind::Sequence) continue;
    const std::string& what = impl_->frame_what[i];
    check_frame_shape(v, frames[i].shape, frames[i].data.size(), B, what);
    check_int_values(m, vi, frames[i], what);
    vals[static_cast<size_t>(vi)] = frames[i].data;
  }
  run_int_graph(m, vals, B, 1, &impl_->state, *impl_->run);
  std::vector<ModelIntArray> out;
  for (int vo : model.outputs) {
    const ModelValue& mv = model.values[static_cast<size_t>(vo)];
    const ModelValueQuant& q = m.vq[static_cast<size_t>(vo)];
    std::vector<int32_t> data = vals[static_cast<size_t>(vo)];  // a copy: vals keeps its storage
    if (mv.kind == ValueKind::State) {
      if (data.empty())
        for (int64_t s = 0; s < mv.rows; ++s) data.insert(data.end(), static_cast<size_t>(B * mv.features), q.zero_point[static_cast<size_t>(s)]);
      out.push_back({{mv.rows, B, mv.features}, q.bits, std::move(data)});
    } else {
      out.push_back({{B, mv.features}, q.bits, std::move(data)});
    }
  }
  return out;
}

std::vector<ModelArray> QuantizedModelStream::step(const std::vector<ModelArray>& frames) {
  const QuantizedModel::Impl& m = impl_->model->impl();
  const Model& model = m.model;
  const int64_t B = impl_->batch;
  require(frames.size() == model.inputs.size(), "QuantizedModelStream::step: ", frames.size(),
          " frames given, the model has ", model.inputs.size(), " inputs");
  std::vector<ModelIntArray> q;
  for (size_t i = 0; i < frames.size(); ++i) {
    const int vi = model.inputs[i];
    const ModelValue& v = model.values[static_cast<size_t>(vi)];
    if (v.kind != ValueKind::Sequence) {
      q.push_back({});
      continue;
    }
    const std::string& what = impl_->frame_what[i];
    check_frame_shape(v, frames[i].shape, frames[i].data.size(), B, what);
    q.push_back(quantize_array(m, vi, frames[i], B, what));
  }
  const std::vector<ModelIntArray> qo = step_raw(q);
  std::vector<ModelArray> out;
  for (size_t o = 0; o < qo.size(); ++o) out.push_back(dequantize_array(m, model.outputs[o], qo[o], B));
  return out;
}

}  // namespace fixq
