// python/src/bind_model.cpp — whole models (fixq/model.h) for Python: an ONNX model's graph
// as fixq imports it, its float forward and stream, the integer model (quantize from numpy
// calibration batches, forward, forward_raw, save / load, info) and its stream. numpy in and
// out; fixq::Error becomes ValueError (module.cpp).
#include <pybind11/stl.h>

#include "bindings.h"
#include "fixq/gru_ptq.h"
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

// One float array per graph input (None: an empty array, a State input's zeros). `what`
// names the call in messages.
std::vector<ModelArray> arrays_of(const Model& m, const pyb::list& inputs, const std::string& what = "Model.forward") {
  if (inputs.size() != m.inputs.size())
    fail(what, ": ", inputs.size(), " inputs given, the model has ", m.inputs.size(), " (", names(m, m.inputs).attr("__repr__")().cast<std::string>(), ")");
  std::vector<ModelArray> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ModelArray a;
    if (!inputs[i].is_none()) {
      const std::string arg = what + " input '" + m.values[static_cast<std::size_t>(m.inputs[i])].name + "'";
      const carray<float> x = as_float_array(inputs[i], arg.c_str());
      a.shape = shape_of(x);
      a.data.assign(x.data(), x.data() + x.size());
    }
    out.push_back(std::move(a));
  }
  return out;
}

// Integer arrays (any integer dtype whose values fit int32), each with its input's bits.
std::vector<ModelIntArray> int_arrays_of(const QuantizedModel& q, const pyb::list& inputs, const std::string& what) {
  const Model& m = q.model();
  const QuantizedModelInfo info = q.info();
  if (inputs.size() != m.inputs.size())
    fail(what, ": ", inputs.size(), " inputs given, the model has ", m.inputs.size());
  std::vector<ModelIntArray> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ModelIntArray a;
    a.bits = info.values[static_cast<std::size_t>(m.inputs[i])].bits;
    if (!inputs[i].is_none()) {
      const std::string arg = what + " input '" + m.values[static_cast<std::size_t>(m.inputs[i])].name + "'";
      const carray<int32_t> x = as_int32_array(inputs[i], arg.c_str());
      a.shape = shape_of(x);
      a.data.assign(x.data(), x.data() + x.size());
    }
    out.push_back(std::move(a));
  }
  return out;
}

pyb::list float_list(std::vector<ModelArray>&& outs) {
  pyb::list res;
  for (ModelArray& a : outs) res.append(to_numpy(std::move(a.data), a.shape));
  return res;
}

// Integers as int8 / int16 by their bits (int32 otherwise).
pyb::list int_list(const std::vector<ModelIntArray>& outs) {
  pyb::list res;
  for (const ModelIntArray& a : outs) {
    if (a.bits <= 8) {
      res.append(to_numpy(std::vector<int8_t>(a.data.begin(), a.data.end()), a.shape));
    } else if (a.bits <= 16) {
      res.append(to_numpy(std::vector<int16_t>(a.data.begin(), a.data.end()), a.shape));
    } else {
      res.append(to_numpy(std::vector<int32_t>(a.data), a.shape));
    }
  }
  return res;
}

// Initial states for a stream: None, or one entry per graph input (None or a State's array;
// a Sequence input's entry is ignored).
std::vector<ModelArray> states_of(const Model& m, const pyb::object& states, const std::string& what) {
  if (states.is_none()) return {};
  return arrays_of(m, states.cast<pyb::list>(), what);
}

pyb::dict info_dict(const QuantizedModel& q) {
  const QuantizedModelInfo info = q.info();
  pyb::dict d;
  d["preset"] = info.preset;
  d["scales"] = to_string(info.scales);
  d["gemm_bits"] = info.gemm_bits;
  d["work"] = info.work;
  d["calib_cosine"] = info.calib_cosine ? pyb::object(pyb::float_(*info.calib_cosine)) : pyb::object(pyb::none());
  pyb::list values;
  for (const ModelValueQuant& v : info.values) {
    pyb::dict e;
    e["name"] = v.name;
    e["bits"] = v.bits;
    e["scale"] = v.scale;
    e["zero_point"] = v.zero_point;
    values.append(e);
  }
  d["values"] = values;
  const Model& m = q.model();
  d["inputs"] = names(m, info.inputs);
  d["outputs"] = names(m, info.outputs);
  pyb::list ops;
  for (const QuantizedModelInfo::Op& o : info.ops) {
    pyb::dict e;
    e["name"] = o.name;
    e["op"] = to_string(o.op);
    e["weight_bits"] = o.weight_bits;
    e["bits"] = o.bits;
    e["inputs"] = names(m, o.inputs);
    e["outputs"] = names(m, o.outputs);
    e["detail"] = o.detail;
    ops.append(e);
  }
  d["ops"] = ops;
  d["text"] = info.to_string();
  return d;
}

QuantizedModel quantize_model(const Model& model, const pyb::list& calib, const std::string& preset, const std::string& scales,
                              const std::string& method, bool range_search, const std::string& rounding, bool bias_correction,
                              double target_cosine) {
  if (calib.size() == 0) fail("QuantizedModel.quantize: no calibration batches");
  std::vector<std::vector<ModelArray>> batches;
  for (std::size_t b = 0; b < calib.size(); ++b) {
    const pyb::object batch = calib[b];
    // One array is a batch of a one-input model.
    pyb::list l;
    if (pyb::isinstance<pyb::list>(batch) || pyb::isinstance<pyb::tuple>(batch)) {
      for (const pyb::handle& a : batch) l.append(a);
    } else {
      l.append(batch);
    }
    batches.push_back(arrays_of(model, l, "QuantizedModel.quantize: calibration batch " + std::to_string(b)));
  }
  ModelQuantConfig c;
  c.preset = preset;
  c.scales = parse_scale_kind(scales, "scales");
  c.observer.method = parse_calib_method(method);
  c.range_search = range_search;
  c.rounding = parse_weight_rounding(rounding);
  c.bias_correction = bias_correction;
  c.target_cosine = target_cosine;
  return QuantizedModel::quantize(model, batches, c);
}

// The streams with the model they read (the Python object keeps it alive: keep_alive).
struct FloatStream {
  const Model* model;
  ModelStream stream;
};
struct IntStream {
  const QuantizedModel* model;
  QuantizedModelStream stream;
};

FloatStream make_float_stream(const Model& model, int64_t batch, const pyb::object& states, const char* what) {
  return FloatStream{&model, ModelStream(model, batch, states_of(model, states, what))};
}
IntStream make_int_stream(const QuantizedModel& q, int64_t batch, const pyb::object& states, const char* what) {
  return IntStream{&q, QuantizedModelStream(q, batch, states_of(q.model(), states, what))};
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
          [](const Model& model, const pyb::list& inputs) { return float_list(model_forward(model, arrays_of(model, inputs))); },
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
      })
      .def(
          "stream",
          [](const Model& model, int64_t batch, const pyb::object& states) {
            return make_float_stream(model, batch, states, "Model.stream initial_states");
          },
          "batch"_a = 1, "initial_states"_a = pyb::none(), pyb::keep_alive<0, 1>(),
          "A ModelStream: one frame [B, C] per graph input per step(); initial_states: None (zeros) or one entry\n"
          "per graph input (a State input's [S, B, H] array or None).");

  pyb::class_<FloatStream>(m, "ModelStream",
                           "The float model one frame per call (fixq/model.h): its steps equal Model.forward bit for bit.")
      .def(pyb::init([](const Model& model, int64_t batch, const pyb::object& states) {
             return make_float_stream(model, batch, states, "ModelStream initial_states");
           }),
           "model"_a, "batch"_a = 1, "initial_states"_a = pyb::none(), pyb::keep_alive<1, 2>())
      .def(
          "step",
          [](FloatStream& s, const pyb::list& frames) {
            return float_list(s.stream.step(arrays_of(*s.model, frames, "ModelStream.step")));
          },
          "frames"_a,
          "One frame per graph input ([B, C] float; None for a State input); one array per graph output: a\n"
          "Sequence's current frame [B, C] (a 'BC' output's too: the posterior of this frame), a State's [S, B, H].")
      .def_property_readonly("batch", [](const FloatStream& s) { return s.stream.batch(); });

  pyb::class_<QuantizedModel>(m, "QuantizedModel",
                              "The integer model (fixq/model.h): int8 or int16 activations, every operator in integers.")
      .def_static("quantize", &quantize_model, "model"_a, "calib"_a, "preset"_a = "int8", "scales"_a = "pow2",
                  "method"_a = "minmax", "range_search"_a = true, "rounding"_a = "gptq", "bias_correction"_a = true,
                  "target_cosine"_a = 0.9999,
                  "Calibrates on calib (a list of batches, each a list of arrays, one per graph input as Model.forward\n"
                  "takes, or one array for a one-input model) and builds the integer model. preset: 'int8' | 'int16' |\n"
                  "'auto' (8 or 16 bits per operator, the cheapest found that reaches target_cosine on calib);\n"
                  "scales: 'pow2' | 'multiplier'; method: the observer ('minmax', 'ema', 'percentile', 'mse'), the\n"
                  "ranges the search by output error starts from (range_search=False: the ranges as observed);\n"
                  "rounding: Linear / Conv1d weights 'gptq' | 'nearest'; bias_correction: the rounding's mean error\n"
                  "taken off their biases.")
      .def(
          "forward",
          [](const QuantizedModel& q, const pyb::list& inputs) {
            return float_list(q.forward(arrays_of(q.model(), inputs, "QuantizedModel.forward")));
          },
          "inputs"_a, "Float inputs quantized, the integer graph, outputs dequantized (float32, each in its layout).")
      .def(
          "forward_raw",
          [](const QuantizedModel& q, const pyb::list& inputs) {
            return int_list(q.forward_raw(int_arrays_of(q, inputs, "QuantizedModel.forward_raw")));
          },
          "inputs"_a, "Integer inputs (in each input's parameters; None for a State: real 0) to integer outputs\n"
          "(int8 or int16 by their bits).")
      .def("save", [](const QuantizedModel& q, const pyb::object& path) { q.save(path_arg(path)); }, "path"_a,
           "The .fixq file (`fixq model run --model` reads it).")
      .def_static("load", [](const pyb::object& path) { return QuantizedModel::load(path_arg(path)); }, "path"_a)
      .def("info", &info_dict, "preset, scales, every value's bits / scale / zero point, every operator ('text': the table).")
      .def_property_readonly("model", [](const QuantizedModel& q) { return q.model(); }, "The graph as quantized (a copy).")
      .def(
          "stream",
          [](const QuantizedModel& q, int64_t batch, const pyb::object& states) {
            return make_int_stream(q, batch, states, "QuantizedModel.stream initial_states");
          },
          "batch"_a = 1, "initial_states"_a = pyb::none(), pyb::keep_alive<0, 1>(), "A QuantizedModelStream.");

  pyb::class_<IntStream>(m, "QuantizedModelStream",
                                    "The integer model one frame per call: its steps equal QuantizedModel.forward bit for bit.")
      .def(pyb::init([](const QuantizedModel& q, int64_t batch, const pyb::object& states) {
             return make_int_stream(q, batch, states, "QuantizedModelStream initial_states");
           }),
           "model"_a, "batch"_a = 1, "initial_states"_a = pyb::none(), pyb::keep_alive<1, 2>())
      .def(
          "step",
          [](IntStream& s, const pyb::list& frames) {
            return float_list(s.stream.step(arrays_of(s.model->model(), frames, "QuantizedModelStream.step")));
          },
          "frames"_a, "Float frames [B, C] (None for a State input) to dequantized output frames.")
      .def(
          "step_raw",
          [](IntStream& s, const pyb::list& frames) {
            return int_list(s.stream.step_raw(int_arrays_of(*s.model, frames, "QuantizedModelStream.step_raw")));
          },
          "frames"_a, "Integer frames to integer output frames (as forward_raw).")
      .def_property_readonly("batch", [](const IntStream& s) { return s.stream.batch(); });
}

}  // namespace fixq::py
