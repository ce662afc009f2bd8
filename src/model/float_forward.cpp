// model_forward: the float reference of a whole model over whole sequences.
#include "fixq/error.h"
#include "model/float_graph.h"
#include "model/layout.h"

namespace fixq {

using namespace model_detail;

std::vector<ModelArray> model_forward(const Model& model, const std::vector<ModelArray>& inputs, const ModelTap& tap) {
  model.validate();
  int64_t B = 0, T = 0;
  std::vector<std::vector<float>> vals = read_float_inputs(model, inputs, B, T);
  run_float_graph(model, vals, B, T, nullptr, &tap);
  std::vector<ModelArray> out;
  for (int v : model.outputs) {
    const ModelValue& mv = model.values[static_cast<size_t>(v)];
    std::vector<float>& data = vals[static_cast<size_t>(v)];
    if (data.empty()) data.assign(static_cast<size_t>(mv.rows * B * mv.features), 0.0f);  // a zero state passed through
    out.push_back({external_shape(mv, B, T), mv.kind == ValueKind::Sequence ? to_external(mv, data, B, T) : data});
  }
  return out;
}

std::vector<ModelArray> model_forward(const Model& model, const std::vector<ModelArray>& inputs) {
  return model_forward(model, inputs, ModelTap{});
}

}  // namespace fixq
