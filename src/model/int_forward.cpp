// QuantizedModel: the integer graph over whole sequences, between float or integer arrays
// in the graph inputs' and outputs' layouts.
#include <algorithm>
#include <cmath>

#include "fixq/error.h"
#include "model/int_io.h"
#include "model/int_run.h"
#include "model/layout.h"
#include "model/quantized.h"
#include "quant/kernels.h"

namespace fixq {

using namespace model_detail;

QuantizedModel::QuantizedModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
QuantizedModel::~QuantizedModel() = default;
QuantizedModel::QuantizedModel(QuantizedModel&&) noexcept = default;
QuantizedModel& QuantizedModel::operator=(QuantizedModel&&) noexcept = default;
const Model& QuantizedModel::model() const { return impl_->model; }

namespace model_detail {

ModelIntArray quantize_array(const QuantizedModel::Impl& m, int v, const ModelArray& a, int64_t B, const std::string& what) {
  const ModelValue& mv = m.model.values[static_cast<size_t>(v)];
  const ModelValueQuant& q = m.vq[static_cast<size_t>(v)];
  ModelIntArray r{a.shape, q.bits, std::vector<int32_t>(a.data.size())};
  if (mv.kind == ValueKind::Sequence) {  // one (scale, zero point): the vectorised kernel, the same integers
    const int64_t bad = quant_detail::active_kernel(&quant_detail::QuantKernels<int32_t>::quantize_finite)(
        a.data.data(), static_cast<int64_t>(a.data.size()), q.scale[0], q.zero_point[0], q.qmin(), q.qmax(), r.data.data());
    if (bad >= 0) fail(what, " element ", bad, " is ", a.data[static_cast<size_t>(bad)], ": inputs must be finite");
    return r;
  }
  const size_t per_row = mv.kind == ValueKind::State ? static_cast<size_t>(B * mv.features) : a.data.size();
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (!std::isfinite(a.data[i])) fail(what, " element ", i, " is ", a.data[i], ": inputs must be finite");
    const size_t row = per_row == 0 ? 0 : i / per_row;
    r.data[i] = quantize_value(a.data[i], q.scale[row], q.zero_point[row], {q.qmin(), q.qmax()});
  }
  return r;
}

ModelArray dequantize_array(const QuantizedModel::Impl& m, int v, const ModelIntArray& a, int64_t B) {
  const ModelValue& mv = m.model.values[static_cast<size_t>(v)];
  const ModelValueQuant& q = m.vq[static_cast<size_t>(v)];
  ModelArray r{a.shape, std::vector<float>(a.data.size())};
  if (mv.kind == ValueKind::Sequence) {
    const int64_t bad = quant_detail::active_kernel(&quant_detail::QuantKernels<int32_t>::dequantize)(
        a.data.data(), static_cast<int64_t>(a.data.size()), q.scale[0], q.zero_point[0], q.qmin(), q.qmax(), r.data.data());
    require(bad < 0, "internal: model output '", mv.name, "' element ", bad, " is outside its range");
    return r;
  }
  const size_t per_row = mv.kind == ValueKind::State ? static_cast<size_t>(B * mv.features) : a.data.size();
  for (size_t i = 0; i < a.data.size(); ++i) {
    const size_t row = per_row == 0 ? 0 : i / per_row;
    r.data[i] = dequantize_value(a.data[i], q.scale[row], q.zero_point[row]);
  }
  return r;
}

void check_int_values(const QuantizedModel::Impl& m, int v, const ModelIntArray& a, const std::string& what) {
  const ModelValueQuant& q = m.vq[static_cast<size_t>(v)];
  require(a.bits == q.bits, what, " has ", a.bits, "-bit values; the model's are ", q.bits, "-bit");
  require(static_cast<int64_t>(a.data.size()) == numel(a.shape), what, " has ", a.data.size(), " values for shape ",
          shape_str(a.shape));
  for (size_t i = 0; i < a.data.size(); ++i)
    if (a.data[i] < q.qmin() || a.data[i] > q.qmax())
      fail(what, " element ", i, " is ", a.data[i], ", outside [", q.qmin(), ", ", q.qmax(), "]");
}

// The whole sequence as chunks of frames with the stream's carried state: every value of a
// chunk then stays in cache (at batch 16 and T = 100 a value of 384 features is 2.4 MB of
// int32 over the whole sequence, and the graph made ~20 passes over such values from memory:
// the whole sequence ran 2.3x slower per frame than one frame per call). Every operator's
// integers for a frame depend only on that frame, the carried conv history and GRU state, so
// any cut gives the same bits as T = 1 steps or one whole pass (tests/model: streams against
// forward). A bidirectional GRU reads the sequence backwards and keeps it whole.
//
// A sequence of at most one chunk runs the same way, as one chunk, so that its values come
// from the same pool.
void run_int_graph_in_chunks(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B,
                             int64_t T) {
  constexpr int64_t kChunkRows = 256;  // B * frames per chunk: a GEMM's rows, values in L2
  const int64_t frames = std::max<int64_t>(1, kChunkRows / B);
  const Model& model = m.model;
  bool whole = T == 0;  // no chunk, yet a GRU's final state is its initial one
  for (const ModelNode& n : model.nodes) whole = whole || (n.op == ModelOp::Gru && n.gru->bidirectional);
  if (whole) {
    run_int_graph(m, vals, B, T, nullptr);
    return;
  }
  ModelIntState state = initial_int_state(m, vals, B);
  // One set of chunk values for every chunk, and kept by the thread from call to call: after
  // its first call no chunk allocates (fresh pages for them cost more than the rest of a
  // batch-16 forward's operators). At most kChunkRows rows of every value (or B, above
  // 256), whatever T. The State values are emptied first, since a state input passed
  // straight through to an output must read as unwritten (below); the Sequence ones are
  // not, since each operator writes every element it sizes (emptied, every call's resize
  // would clear them again: ~3% of a batch-1 forward).
  thread_local std::vector<std::vector<int32_t>> chunk;
  thread_local IntRun run;  // the conv and GRU buffers, likewise
  chunk.resize(model.values.size());
  for (size_t v = 0; v < chunk.size(); ++v)
    if (model.values[v].kind == ValueKind::State) chunk[v].clear();
  std::vector<std::vector<int32_t>> outs(model.values.size());
  for (int vo : model.outputs) {
    const ModelValue& v = model.values[static_cast<size_t>(vo)];
    if (v.kind == ValueKind::Sequence) outs[static_cast<size_t>(vo)].resize(static_cast<size_t>(B * T * v.features));
  }
  for (int64_t t0 = 0; t0 < T; t0 += frames) {
    const int64_t tc = std::min(frames, T - t0);
    for (int vi : model.inputs) {
      const ModelValue& v = model.values[static_cast<size_t>(vi)];
      if (v.kind != ValueKind::Sequence) continue;  // states are in `state` already
      const int64_t C = v.features;
      std::vector<int32_t>& c = chunk[static_cast<size_t>(vi)];
      c.resize(static_cast<size_t>(B * tc * C));
      for (int64_t b = 0; b < B; ++b)
        std::copy_n(vals[static_cast<size_t>(vi)].data() + (b * T + t0) * C, tc * C, c.data() + b * tc * C);
    }
    run_int_graph(m, chunk, B, tc, &state, run);
    for (int vo : model.outputs) {
      const ModelValue& v = model.values[static_cast<size_t>(vo)];
      if (v.kind == ValueKind::State) {
        // A GRU's final state: the last chunk's. A state input passed straight through keeps vals'.
        if (t0 + tc == T && !chunk[static_cast<size_t>(vo)].empty()) vals[static_cast<size_t>(vo)] = chunk[static_cast<size_t>(vo)];
        continue;
      }
      const int64_t C = v.features;
      for (int64_t b = 0; b < B; ++b)
        std::copy_n(chunk[static_cast<size_t>(vo)].data() + b * tc * C, tc * C,
                    outs[static_cast<size_t>(vo)].data() + (b * T + t0) * C);
    }
  }
  for (int vo : model.outputs)
    if (model.values[static_cast<size_t>(vo)].kind == ValueKind::Sequence) vals[static_cast<size_t>(vo)] = std::move(outs[static_cast<size_t>(vo)]);
}

}  // namespace model_detail

namespace {

// Whether to_internal / to_external (layout.cpp) leave v's data as it is: then it is moved,
// not copied (at batch 16, T = 100 the fresh copies' page faults cost more than the copies).
bool internal_as_is(const ModelValue& v) {
  return v.kind == ValueKind::State || v.layout.axes == "BTC" || v.layout.axes == "TC";
}

// forward_raw over inputs it may take apart.
std::vector<ModelIntArray> forward_owned(const QuantizedModel::Impl& m, std::vector<ModelIntArray>&& inputs) {
  const Model& model = m.model;
  require(inputs.size() == model.inputs.size(), "quantized model: ", inputs.size(), " inputs given, the model has ",
          model.inputs.size());
  int64_t B = -1, T = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ModelValue& v = model.values[static_cast<size_t>(model.inputs[i])];
    if (v.kind != ValueKind::Sequence) continue;
    const SeqDims d = sequence_dims(v, inputs[i].shape, input_name(v));
    require(B < 0 || (d.B == B && d.T == T), input_name(v), " has B = ", d.B, ", T = ", d.T,
            "; an earlier input has B = ", B, ", T = ", T);
    B = d.B;
    T = d.T;
  }
  require(B >= 1, "quantized model: the batch must be >= 1, got ", B);
  std::vector<std::vector<int32_t>> vals(model.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int vi = model.inputs[i];
    const ModelValue& v = model.values[static_cast<size_t>(vi)];
    ModelIntArray& a = inputs[i];
    if (v.kind == ValueKind::State) {
      if (a.shape.empty() && a.data.empty()) continue;  // real 0
      const Shape want{v.rows, B, v.features};
      require(a.shape == want, input_name(v), " (a state, layout SBH) must be ", shape_str(want), ", got ", shape_str(a.shape));
    }
    check_int_values(m, vi, a, input_name(v));
    vals[static_cast<size_t>(vi)] = internal_as_is(v) ? std::move(a.data) : to_internal(v, a.data, B, T);
  }
  run_int_graph_in_chunks(m, vals, B, T);
  std::vector<ModelIntArray> out;
  for (int vo : model.outputs) {
    const ModelValue& mv = model.values[static_cast<size_t>(vo)];
    const ModelValueQuant& q = m.vq[static_cast<size_t>(vo)];
    std::vector<int32_t>& data = vals[static_cast<size_t>(vo)];
    if (data.empty()) {  // a zero state passed through: each row's zero point
      for (int64_t s = 0; s < mv.rows; ++s) data.insert(data.end(), static_cast<size_t>(B * mv.features), q.zero_point[static_cast<size_t>(s)]);
    }
    out.push_back({external_shape(mv, B, T), q.bits, internal_as_is(mv) ? std::move(data) : to_external(mv, data, B, T)});
  }
  return out;
}

}  // namespace

std::vector<ModelIntArray> QuantizedModel::forward_raw(const std::vector<ModelIntArray>& inputs) const {
  std::vector<ModelIntArray> copy = inputs;
  return forward_owned(*impl_, std::move(copy));
}

std::vector<ModelArray> QuantizedModel::forward(const std::vector<ModelArray>& inputs) const {
  const Impl& m = *impl_;
  const Model& model = m.model;
  require(inputs.size() == model.inputs.size(), "quantized model: ", inputs.size(), " inputs given, the model has ",
          model.inputs.size());
  int64_t B = 1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ModelValue& v = model.values[static_cast<size_t>(model.inputs[i])];
    if (v.kind == ValueKind::Sequence) {
      B = sequence_dims(v, inputs[i].shape, input_name(v)).B;
      break;
    }
  }
  std::vector<ModelIntArray> q;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int vi = model.inputs[i];
    const ModelValue& v = model.values[static_cast<size_t>(vi)];
    const ModelArray& a = inputs[i];
    if (v.kind == ValueKind::State && a.shape.empty() && a.data.empty()) {
      q.push_back({{}, m.vq[static_cast<size_t>(vi)].bits, {}});
      continue;
    }
    if (v.kind == ValueKind::State) {
      const Shape want{v.rows, B, v.features};
      require(a.shape == want, input_name(v), " (a state, layout SBH) must be ", shape_str(want), ", got ", shape_str(a.shape));
    }
    require(static_cast<int64_t>(a.data.size()) == numel(a.shape), input_name(v), " has ", a.data.size(),
            " values for shape ", shape_str(a.shape));
    q.push_back(quantize_array(m, vi, a, B, input_name(v)));
  }
  const std::vector<ModelIntArray> qo = forward_owned(m, std::move(q));
  std::vector<ModelArray> out;
  for (size_t o = 0; o < qo.size(); ++o) out.push_back(dequantize_array(m, model.outputs[o], qo[o], B));
  return out;
}

}  // namespace fixq
