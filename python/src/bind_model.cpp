// python/src/bind_model.cpp — whole models (fixq/model.h) for Python: an ONNX model's graph
// as fixq imports it, and its float forward, so that tests and users can compare it with
// the framework that wrote the file.
#include <pybind11/stl.h>

#include "bindings.h"
#include "fixq/model.h"

namespace fixq::py {
namespace {

pyb::dict value_dict(const Model& m, int v) {
  const ModelValue& x = m.values[static_cast<std::size_t>(v)];
  pyb::dict d;
  d["name"] = x.name;
  d["kind"] = x.kind == ValueKind::State ? "state" : "sequence";
  d["features"] = x.features;
  d["rows"] = x.rows;
  d["layout"] = x.layout.axes;
  return d;
}

pyb::list names(const Model& m, const std::vector<int>& ids) {
  pyb::list out;
  for (const int i : ids) out.append(i < 0 ? pyb::object(pyb::none()) : pyb::object(pyb::str(m.values[static_cast<std::size_t>(i)].name)));
  return out;
}

pyb::dict node_dict(const Model& m, const ModelNode& n) {
  pyb::dict d;
  d["name"] = n.name;
  d["op"] = to_string(n.op);
  d["inputs"] = names(m, n.inputs);
  d["outputs"] = names(m, n.outputs);
  d["in_features"] = n.in_features;
  d["out_features"] = n.out_features;
  d["kernel"] = n.kernel;
  d["dilation"] = n.dilation;
  d["groups"] = n.groups;
  d["begin"] = n.begin;
  d["end"] = n.end;
  d["has_bias"] = !n.bias.empty();
  if (n.gru) {
    pyb::dict g;
    g["input_size"] = n.gru->input_size;
    g["hidden_size"] = n.gru->hidden_size;
    g["num_layers"] = n.gru->num_layers;
    g["bidirectional"] = n.gru->bidirectional;
    g["cell_kind"] = to_string(n.gru->cell_kind);
    d["gru"] = g;
  } else {
    d["gru"] = pyb::none();
  }
  return d;
}

std::vector<ModelArray> arrays_of(const Model& m, const pyb::list& inputs) {
  if (inputs.size() != m.inputs.size())
    fail("Model.forward: ", inputs.size(), " inputs given, the model has ", m.inputs.size());
  std::vector<ModelArray> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ModelArray a;
    if (!inputs[i].is_none()) {
      const carray<float> x = as_float_array(inputs[i], "Model.forward input");
      a.shape = shape_of(x);
      a.data.assign(x.data(), x.data() + x.size());
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

void bind_model(pyb::module_& m) {
  using namespace pybind11::literals;
  pyb::class_<Model>(m, "Model", "A whole model (fixq/model.h): a graph of operators over frames [B, T, C].")
      .def_static(
          "load_onnx", [](const pyb::object& path) { return load_model_onnx(path_arg(path)); }, "path"_a,
          "The ONNX model at path (torch.onnx.export, opsets 11-17; tf2onnx GRUs) as fixq imports it.")
      .def(
          "forward",
          [](const Model& model, const pyb::list& inputs) {
            std::vector<ModelArray> outs = model_forward(model, arrays_of(model, inputs));
            pyb::list res;
            for (ModelArray& a : outs) res.append(to_numpy(std::move(a.data), a.shape));
            return res;
          },
          "inputs"_a,
          "The float forward: one array per graph input (None for a State input: zeros), in each input's layout;\n"
          "one float32 array per graph output, in its layout.")
      .def_property_readonly("values", [](const Model& model) {
        pyb::list out;
        for (std::size_t v = 0; v < model.values.size(); ++v) out.append(value_dict(model, static_cast<int>(v)));
        return out;
      })
      .def_property_readonly("nodes", [](const Model& model) {
        pyb::list out;
        for (const ModelNode& n : model.nodes) out.append(node_dict(model, n));
        return out;
      })
      .def_property_readonly("inputs", [](const Model& model) {
        pyb::list out;
        for (const int v : model.inputs) out.append(value_dict(model, v));
        return out;
      })
      .def_property_readonly("outputs", [](const Model& model) {
        pyb::list out;
        for (const int v : model.outputs) out.append(value_dict(model, v));
        return out;
      });
}

}  // namespace fixq::py
