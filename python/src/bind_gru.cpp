// fixq.GruModel and fixq.GruStream: the float GRU (fixq/gru.h) for numpy arrays, with
// import from a torch.nn.GRU (duck-typed: anything with a state_dict() of nn.GRU's names).
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "fixq/gru.h"
#include "gru_args.h"

namespace fixq::py {

namespace {

GruDims dims_of(const GruModel& m) { return {m.input_size, m.hidden_size, m.num_layers, m.directions()}; }

NamedTensor named_tensor(const std::string& name, const pyb::handle& value) {
  pyb::object v = pyb::reinterpret_borrow<pyb::object>(value);
  if (pyb::hasattr(v, "detach")) v = v.attr("detach")().attr("cpu")().attr("float")().attr("numpy")();  // a torch tensor
  const carray<float> a = as_float_array(v, name.c_str());
  NamedTensor t;
  t.name = name;
  t.shape = shape_of(a);
  t.data.assign(a.data(), a.data() + a.size());
  return t;
}

GruModel from_state_dict(const pyb::dict& sd, const std::string& cell_kind) {
  std::vector<NamedTensor> tensors;
  for (const auto& [k, v] : sd) tensors.push_back(named_tensor(pyb::str(k).cast<std::string>(), v));
  GruModel m = gru_from_torch(tensors);
  m.cell_kind = parse_gru_cell_kind(cell_kind, "cell_kind");
  return m;
}

GruModel from_torch(const pyb::object& module) {
  if (pyb::hasattr(module, "mode")) {
    const std::string mode = pyb::str(module.attr("mode")).cast<std::string>();
    if (mode != "GRU") fail("from_torch: expected a torch.nn.GRU, got a module of mode '", mode, "'");
  }
  if (!pyb::hasattr(module, "state_dict")) fail("from_torch: expected a torch.nn.GRU (an object with state_dict())");
  return from_state_dict(module.attr("state_dict")().cast<pyb::dict>(), "reset_after");  // nn.GRU's cell
}

pyb::dict state_dict(const GruModel& m) {
  pyb::dict d;
  for (NamedTensor& t : gru_to_torch(m)) d[pyb::str(t.name)] = to_numpy(std::move(t.data), t.shape);
  return d;
}

// The model prepared for forward() (validated, its weights packed), made at the first call
// and kept on the Python object: gru_forward would validate and pack on every call, which
// at one short sequence per call costs as much as the steps. A GruModel never changes once
// made (Python sees its fields read-only), so the prepared copy stays its equal.
const FloatGru& prepared(const pyb::object& self) {
  static constexpr const char* kAttr = "_fixq_prepared";
  pyb::object p = pyb::getattr(self, kAttr, pyb::none());
  if (p.is_none()) {
    p = pyb::cast(FloatGru(self.cast<const GruModel&>()));
    pyb::setattr(self, kAttr, p);
  }
  return p.cast<const FloatGru&>();
}

pyb::tuple forward(const pyb::object& self, const pyb::object& x, const pyb::object& h0, const pyb::object& lengths,
                   bool batch_first, int threads) {
  const FloatGru& f = prepared(self);
  const GruModel& m = f.model();
  GruArgs a;
  make_gru_args(a, dims_of(m), x, h0, lengths, batch_first);
  a.options.threads = threads;
  GruOutput out;
  {
    pyb::gil_scoped_release nogil;
    f.forward(a.x.data(), a.x_shape, out, a.options);
  }
  return gru_result(std::move(out), a, dims_of(m));
}

using FloatStream = PyStream<GruStream>;

FloatStream make_stream(const GruModel& m, int64_t batch, const pyb::object& h0) {
  return make_py_stream<GruStream>(m, dims_of(m), batch, h0);
}

}  // namespace

void bind_gru(pyb::module_& m) {
  using namespace pybind11::literals;

  // What forward() keeps on a model (prepared() above); not part of the API.
  pyb::class_<FloatGru>(m, "_PreparedGru");

  pyb::class_<GruModel>(m, "GruModel", pyb::dynamic_attr(),
                        "A float GRU (torch.nn.GRU / Haste semantics), the model the integer GRU is calibrated on.\n\n"
                        "Tensors: x [T, B, C] (or [B, T, C] with batch_first), y [T, B, D*H], h_n [L*D, B, H] as\n"
                        "PyTorch. Make one with GruModel.from_torch(nn.GRU), GruModel.from_state_dict(dict) or\n"
                        "GruModel.load(path) (safetensors or ONNX).")
      .def_static("from_torch", &from_torch, "module"_a,
                  "The float GRU of a torch.nn.GRU (its weights are copied; batch_first is a forward() argument here).")
      .def_static("from_state_dict", &from_state_dict, "state_dict"_a, "cell_kind"_a = "reset_after",
                  "From an nn.GRU state_dict: {name: array or tensor} with torch's names (weight_ih_l0, ...) and gate\n"
                  "order (r, z, n). Shapes decide the sizes; missing biases are zero. cell_kind: 'reset_after' (nn.GRU's\n"
                  "cell) or 'reset_before' (r multiplies h before R: Keras reset_after=False, ONNX linear_before_reset=0)\n"
                  "for weights of that cell laid out the same way.")
      .def_static(
          "load",
          [](const pyb::object& path, const std::string& prefix) {
            const std::string p = path_arg(path);
            pyb::gil_scoped_release nogil;
            return load_gru_float(p, prefix);
          },
          "path"_a, "prefix"_a = "",
          "Reads a float GRU from a file: fixq's model file (tools/export_gru.py, GruModel.save), any safetensors\n"
          "state_dict holding an nn.GRU (safetensors.torch.save_file(model.state_dict(), path); F32, F16, BF16), or\n"
          "an ONNX model (torch.onnx.export). prefix picks one GRU of a whole model ('encoder.rnn.'); without it\n"
          "the file must hold exactly one, and the error lists them otherwise.")
      .def(
          "save", [](const GruModel& m, const pyb::object& path) { save_gru_float(path_arg(path), m); }, "path"_a,
          "Writes the float model file (safetensors, 'gru-float').")
      .def("state_dict", &state_dict,
           "The model as an nn.GRU state_dict of float32 numpy arrays (torch's names and gate order); load it into a\n"
           "torch.nn.GRU with load_state_dict({k: torch.from_numpy(v) for k, v in d.items()}).")
      .def_readonly("input_size", &GruModel::input_size)
      .def_readonly("hidden_size", &GruModel::hidden_size)
      .def_readonly("num_layers", &GruModel::num_layers)
      .def_readonly("bidirectional", &GruModel::bidirectional)
      .def_property_readonly("cell_kind", [](const GruModel& g) { return to_string(g.cell_kind); },
                             "'reset_after' (torch.nn.GRU's cell) or 'reset_before' (docs/spec.md 5.4)")
      .def_property_readonly("directions", &GruModel::directions)
      .def("forward", &forward, "x"_a, "h0"_a = pyb::none(), "lengths"_a = pyb::none(), "batch_first"_a = false,
           "threads"_a = 1,
           "Runs the float GRU: x [T, B, C] ([B, T, C] if batch_first), h0 [L*D, B, H] or None (zeros), lengths [B]\n"
           "or None (all T). Returns (y, h_n) as float32 arrays: y [T, B, D*H] ([B, T, D*H]), zero at padded steps;\n"
           "h_n [L*D, B, H]. NaN / Inf in x or h0 raise ValueError. threads: from a batch of 16, the batch is split\n"
           "over that many threads (0: every hardware thread, or FIXQ_NUM_THREADS); the results are the same bits.\n"
           "The first call validates the model and packs its weights once, into a copy kept with the model (about\n"
           "twice its memory); later calls reuse it.")
      .def("__call__", &forward, "x"_a, "h0"_a = pyb::none(), "lengths"_a = pyb::none(), "batch_first"_a = false,
           "threads"_a = 1, "Same as forward().")
      .def("stream", &make_stream, "batch"_a = 1, "h0"_a = pyb::none(), pyb::keep_alive<0, 1>(),
           "A GruStream: one frame at a time (unidirectional models only), equal to forward() bit for bit.\n"
           "h0: [L, B, H] or None (zeros).")
      .def("__repr__", [](const GruModel& g) {
        return "GruModel(input_size=" + std::to_string(g.input_size) + ", hidden_size=" + std::to_string(g.hidden_size) +
               ", num_layers=" + std::to_string(g.num_layers) + ", bidirectional=" + (g.bidirectional ? "True" : "False") + ")";
      });

  pyb::class_<FloatStream>(m, "GruStream",
                           "Streaming float GRU (from GruModel.stream()): step() advances every layer by one frame.")
      .def("step", &py_stream_step<GruStream>, "frame"_a,
           "Advances by one frame [B, C] (or [C] when B == 1); returns the top layer's h [B, H] (or [H]).")
      .def_property_readonly("state", &py_stream_state<GruStream>, "The state [L, B, H] (a copy).")
      .def_property_readonly("batch", [](const FloatStream& s) { return s.batch; });

  bind_qgru(m);
}

}  // namespace fixq::py
