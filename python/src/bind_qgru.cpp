// fixq.GruQuantConfig, GruQuantParams, GruCalibrator, QuantizedGru and
// QuantizedGruStream: the integer GRU (fixq/qgru.h) for numpy arrays.
//
// Parameters travel as the library's own versioned JSON, so params() dicts, the .fixq
// file and `fixq gru quantize --params-out` all hold the same numbers (floats round-trip
// exactly through JSON both in C++ and in Python's json module).
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "fixq/calib.h"
#include "fixq/qgru.h"
#include "gru_args.h"

namespace fixq::py {

namespace {

ScaleKind parse_scales(const std::string& s) { return parse_scale_kind(s, "scales"); }

pyb::object json_loads(const std::string& text) { return pyb::module_::import("json").attr("loads")(text); }
std::string json_dumps(const pyb::handle& obj) { return pyb::module_::import("json").attr("dumps")(obj).cast<std::string>(); }

}  // namespace

// config, each form told apart by its type, never by guessing at a string's contents:
//   "int8" | "int16"  a named base (the only strings accepted), with `scales`;
//   GruQuantConfig    as is (JSON text: GruQuantConfig.from_json(text));
//   dict              the JSON object (GruQuantConfig.to_dict());
//   os.PathLike       a JSON config file, e.g. pathlib.Path (GruQuantConfig.load(path)).
// scales applies to the named bases; with a full configuration it must be omitted (None)
// or agree with the configuration's own.
GruQuantConfig config_arg(const pyb::object& config, const pyb::object& scales) {
  GruQuantConfig c;
  bool named = false;
  if (pyb::isinstance<GruQuantConfig>(config)) {
    c = config.cast<GruQuantConfig>();
  } else if (pyb::isinstance<pyb::dict>(config)) {
    c = GruQuantConfig::from_json(json_dumps(config));
  } else if (pyb::isinstance<pyb::str>(config)) {
    const std::string name = config.cast<std::string>();
    // Earlier versions also read JSON text and file paths from a string: say where they went.
    require(GruQuantConfig::is_base_name(name), "config='", name,
            "': a string names a base configuration, 'int8' or 'int16'; pass JSON text as "
            "GruQuantConfig.from_json(text) and a JSON file as pathlib.Path(path) or GruQuantConfig.load(path)");
    named = true;
    c = GruQuantConfig::base(name, parse_scales(scales.is_none() ? "pow2" : scales.cast<std::string>()));
  } else if (pyb::hasattr(config, "__fspath__")) {
    c = GruQuantConfig::load(path_arg(config));
  } else {
    fail("config must be 'int8', 'int16', a GruQuantConfig, a dict or a pathlib.Path of a JSON config file");
  }
  if (!named && !scales.is_none() && parse_scales(scales.cast<std::string>()) != c.scale_kind)
    fail("scales='", scales.cast<std::string>(), "' contradicts the configuration's own scales '", to_string(c.scale_kind),
         "'; omit scales or change the configuration");
  c.validate();
  return c;
}

namespace {

// params: GruQuantParams | dict (params_dict()) | JSON text.
GruQuantParams params_arg(const pyb::object& params) {
  if (pyb::isinstance<GruQuantParams>(params)) return params.cast<GruQuantParams>();
  if (pyb::isinstance<pyb::dict>(params)) return GruQuantParams::from_json(json_dumps(params));
  if (pyb::isinstance<pyb::str>(params)) return GruQuantParams::from_json(params.cast<std::string>());
  fail("params must be a GruQuantParams, a dict (as params() returns) or JSON text");
}

pyb::dict config_bits(const GruQuantConfig& c) {
  pyb::dict d;
  for (int i = 0; i < kGruOpCount; ++i) d[pyb::str(to_string(static_cast<GruOp>(i)))] = c.bits[static_cast<size_t>(i)];
  return d;
}

GruQuantConfig make_config(const std::string& base, const std::string& scales, const pyb::object& bits) {
  GruQuantConfig c = GruQuantConfig::base(base, parse_scales(scales), "base");
  if (!bits.is_none()) {
    for (const auto& [k, v] : bits.cast<pyb::dict>()) {
      const GruOp op = parse_gru_op(pyb::str(k).cast<std::string>());
      const int b = v.cast<int>();
      require(b == 8 || b == 16, "GRU operator ", to_string(op), " has ", b, " bits; each operator is 8 or 16 bits");
      c.bits[static_cast<size_t>(op)] = b;
    }
  }
  c.validate();
  return c;
}

GruDims dims_of(const QuantizedGru& q) {
  return {q.input_size(), q.hidden_size(), q.num_layers(), q.bidirectional() ? 2 : 1};
}

ObserverConfig observer_config(const std::string& method, double ema_decay, double percentile, int bins) {
  ObserverConfig oc;
  oc.method = parse_calib_method(method);
  oc.ema_decay = ema_decay;
  oc.percentile = percentile;
  oc.bins = bins;
  oc.validate();
  return oc;
}


// The calibrator and the model it reads (a Python reference keeps the model alive).
// observe() runs without the GIL; the mutex keeps two Python threads from feeding one
// calibrator at once.
struct Calibrator {
  GruCalibrator cal;
  const GruModel* model;
  std::unique_ptr<std::mutex> busy = std::make_unique<std::mutex>();
};

void observe(Calibrator& c, const pyb::object& x, const pyb::object& lengths, bool batch_first, const pyb::object& h0) {
  const GruModel& m = *c.model;
  GruArgs a;
  make_gru_args(a, {m.input_size, m.hidden_size, m.num_layers, m.directions()}, x, h0, lengths, batch_first);
  pyb::gil_scoped_release nogil;
  const std::lock_guard<std::mutex> lock(*c.busy);
  c.cal.observe(a.x.data(), a.x_shape, a.options);
}

pyb::tuple qforward(const QuantizedGru& q, const pyb::object& x, const pyb::object& h0, const pyb::object& lengths,
                    bool batch_first, int threads) {
  GruArgs a;
  make_gru_args(a, dims_of(q), x, h0, lengths, batch_first);
  a.options.threads = threads;
  GruOutput out;
  {
    pyb::gil_scoped_release nogil;
    out = q.forward(a.x.data(), a.x_shape, a.options);
  }
  return gru_result(std::move(out), a, dims_of(q));
}

using QuantStream = PyStream<QuantizedGruStream>;

// One FixedPointScale as {"m": int, "shift": int}; a per-row list as two int64 arrays.
pyb::dict scale_dict(const FixedPointScale& s) {
  pyb::dict d;
  d["m"] = s.m;
  d["shift"] = s.shift;
  return d;
}

pyb::dict scales_dict(const std::vector<FixedPointScale>& v) {
  std::vector<int64_t> m, shift;
  for (const FixedPointScale& s : v) {
    m.push_back(s.m);
    shift.push_back(s.shift);
  }
  const Shape shape{static_cast<int64_t>(v.size())};
  pyb::dict d;
  d["m"] = to_numpy(std::move(m), shape);
  d["shift"] = to_numpy(std::move(shift), shape);
  return d;
}

pyb::dict lut_dict(const ActivationLut& l) {
  pyb::dict d;
  d["input_min"] = l.input_min();
  d["shift"] = l.shift();
  d["frac_bits"] = l.frac_bits();
  d["direct"] = l.direct();
  d["output_min"] = l.output_range().qmin;
  d["output_max"] = l.output_range().qmax;
  const std::span<const int32_t> t = l.table();
  d["table"] = to_numpy(std::vector<int64_t>(t.begin(), t.end()), Shape{static_cast<int64_t>(t.size())});
  return d;
}

pyb::array_t<int64_t> ints(const std::vector<int32_t>& v, const Shape& shape) {
  return to_numpy(std::vector<int64_t>(v.begin(), v.end()), shape);
}

pyb::dict cell_constants(const QuantizedGru& q, size_t c) {
  const GruCellConstants k = q.cell_constants(c);
  const int64_t H3 = static_cast<int64_t>(k.q_bx.size()), H = H3 / 3;
  pyb::dict d;
  d["q_w"] = ints(k.q_w, {H3, static_cast<int64_t>(k.q_w.size()) / H3});
  d["q_r"] = ints(k.q_r, {H3, H});
  d["q_bx"] = ints(k.q_bx, {H3});
  d["q_br"] = ints(k.q_br, {H3});
  d["wx_scale"] = scales_dict(k.wx_scale);
  d["rh_scale"] = scales_dict(k.rh_scale);
  const std::pair<const char*, const FixedPointScale*> ratios[] = {
      {"wx_to_z", &k.wx_to_z}, {"rh_to_z", &k.rh_to_z},       {"wx_to_r", &k.wx_to_r}, {"rh_to_r", &k.rh_to_r},
      {"rh_to_rhab", &k.rh_to_rhab}, {"wx_to_g", &k.wx_to_g}, {"rrh_to_g", &k.rrh_to_g}, {"rrh_mul", &k.rrh_mul},
      {"old_mul", &k.old_mul}, {"new_mul", &k.new_mul},     {"old_to_h", &k.old_to_h}, {"new_to_h", &k.new_to_h}};
  for (const auto& [name, s] : ratios) d[name] = scale_dict(*s);
  d["bias_z"] = ints(k.bias_z, {H});
  d["bias_r"] = ints(k.bias_r, {H});
  d["bias_rhab"] = ints(k.bias_rhab, {H});
  d["bias_g"] = ints(k.bias_g, {H});
  d["q_one"] = k.q_one;
  d["cell_kind"] = to_string(k.cell_kind);
  if (k.cell_kind == GruCellKind::ResetBefore) {  // spec 5.4's two ratios
    d["reset_mul"] = scale_dict(k.reset_mul);
    d["rh_to_g"] = scale_dict(k.rh_to_g);
  }
  d["sig_z"] = lut_dict(k.sig_z);
  d["sig_r"] = lut_dict(k.sig_r);
  d["tanh_g"] = lut_dict(k.tanh_g);
  pyb::list below;
  for (const FixedPointScale& s : k.x_from_below) below.append(scale_dict(s));
  d["x_from_below"] = below;
  return d;
}

QuantStream make_qstream(const QuantizedGru& q, int64_t batch, const pyb::object& h0) {
  return make_py_stream<QuantizedGruStream>(q, dims_of(q), batch, h0);
}

}  // namespace

void bind_qgru(pyb::module_& m) {
  using namespace pybind11::literals;

  pyb::class_<GruQuantConfig>(m, "GruQuantConfig",
                              "Bit widths (8 or 16) per GRU operator and the kind of scale ('pow2': shifts only, or\n"
                              "'multiplier': fixed-point multipliers).")
      .def(pyb::init(&make_config), "base"_a = "int8", "scales"_a = "pow2", "bits"_a = pyb::none(),
           "GruQuantConfig(base='int8', scales='pow2', bits=None): 'int8' = every operator 8-bit, 'int16' = 8-bit\n"
           "weights (W, R) and 16-bit everything else; bits={'g_pre': 16, ...} overrides operators.")
      .def_static("int8", [](const std::string& scales) { return GruQuantConfig::int8(parse_scales(scales)); }, "scales"_a = "pow2")
      .def_static("int16", [](const std::string& scales) { return GruQuantConfig::int16(parse_scales(scales)); }, "scales"_a = "pow2")
      .def_static("from_json", &GruQuantConfig::from_json, "text"_a,
                  "{\"version\": 1, \"base\": \"int8\"|\"int16\", \"scales\": \"pow2\"|\"multiplier\", \"bits\": {...}}")
      .def_static("load", [](const pyb::object& path) { return GruQuantConfig::load(path_arg(path)); }, "path"_a,
                  "from_json() of a JSON config file (str or os.PathLike), as `fixq gru quantize --config FILE`.")
      .def("to_json", &GruQuantConfig::to_json)
      .def("to_dict", [](const GruQuantConfig& c) { return json_loads(c.to_json()); })
      .def_static("from_dict", [](const pyb::dict& d) { return GruQuantConfig::from_json(json_dumps(d)); }, "d"_a)
      .def_property_readonly("scales", [](const GruQuantConfig& c) { return to_string(c.scale_kind); })
      .def_property_readonly("bits", &config_bits, "{operator name: bits} (a copy)")
      .def("__eq__", [](const GruQuantConfig& a, const GruQuantConfig& b) { return a.bits == b.bits && a.scale_kind == b.scale_kind; })
      .def("__repr__", [](const GruQuantConfig& c) { return "GruQuantConfig.from_json('''" + c.to_json() + "''')"; });

  pyb::class_<GruQuantParams>(m, "GruQuantParams",
                              "Quantization parameters of every operator of every cell ([layer * D + direction]).")
      .def_static("from_json", &GruQuantParams::from_json, "text"_a)
      .def("to_json", &GruQuantParams::to_json)
      .def_static("from_dict", [](const pyb::dict& d) { return GruQuantParams::from_json(json_dumps(d)); }, "d"_a,
                  "From the dict to_dict() returns (the versioned JSON, parsed).")
      .def("to_dict", [](const GruQuantParams& p) { return json_loads(p.to_json()); },
           "{'version': 1, 'config': {...}, 'cells': [{op: {'scale': [...], 'exponent': [...], 'zero_point': [...]}}]}")
      .def_property_readonly("config", [](const GruQuantParams& p) { return p.config; })
      .def_property_readonly("num_cells", [](const GruQuantParams& p) { return p.cells.size(); })
      .def(
          "op",
          [](const GruQuantParams& p, size_t cell, const std::string& op) {
            require(cell < p.cells.size(), "cell ", cell, " out of range: the parameters hold ", p.cells.size(), " cells");
            return p.cells[cell][parse_gru_op(op)];
          },
          "cell"_a, "op"_a, "The QuantParams of one operator ('x', 'h', 'W', 'z_pre', ...) of one cell.")
      .def("__eq__", [](const GruQuantParams& a, const GruQuantParams& b) { return a.to_json() == b.to_json(); });

  m.def(
      "gru_parameter_params",
      [](const std::string& op, const pyb::object& config, const pyb::object& values) {
        const carray<float> v = as_float_array(values, "values");
        const Shape shape = shape_of(v);
        require(shape.size() == 1 || shape.size() == 2, "values must be [rows] or [rows, n], got ", shape_str(shape));
        return gru_parameter_params(parse_gru_op(op), config_arg(config, pyb::none()),
                                    std::span<const float>(v.data(), v.size()), shape[0]);
      },
      "op"_a, "config"_a, "values"_a,
      "The QuantParams of a weight or bias operator ('W', 'R', 'bx', 'br') from its float values [3H, n] or\n"
      "[3H] (Haste gate order): symmetric, per row, min/max, as GruCalibrator derives them.");

  m.def("gru_ops", [] {
    std::vector<std::string> v;
    for (int i = 0; i < kGruOpCount; ++i) v.push_back(to_string(static_cast<GruOp>(i)));
    return v;
  }, "The operator names of the integer GRU, in the library's order.");

  pyb::class_<Calibrator>(m, "GruCalibrator",
                          "Streams calibration batches through the float GRU and records every operator's range.\n\n"
                          "GruCalibrator(model, config='int8', scales=None, method='minmax', ema_decay=0.9,\n"
                          "percentile=99.99, bins=2048). config: 'int8' | 'int16' | GruQuantConfig | dict | os.PathLike of a\n"
                          "JSON config file; scales: 'pow2' (default) | 'multiplier' for the named configs; method:\n"
                          "'minmax' | 'ema' | 'percentile' | 'mse'. Each observe() call is one EMA step per time step.")
      .def(pyb::init([](const GruModel& model, const pyb::object& config, const pyb::object& scales, const std::string& method,
                        double ema_decay, double percentile, int bins) {
             return Calibrator{GruCalibrator(model, config_arg(config, scales), observer_config(method, ema_decay, percentile, bins)),
                               &model};
           }),
           "model"_a, "config"_a = "int8", "scales"_a = pyb::none(), "method"_a = "minmax", "ema_decay"_a = 0.9,
           "percentile"_a = 99.99, "bins"_a = 2048, pyb::keep_alive<1, 2>())
      .def(
          "observe",
          [](Calibrator& c, const pyb::object& x, const pyb::object& lengths, bool batch_first, const pyb::object& h0) {
            observe(c, x, lengths, batch_first, h0);
          },
          "x"_a, "lengths"_a = pyb::none(), "batch_first"_a = false, "h0"_a = pyb::none(),
          "Feeds one batch x [T, B, C] ([B, T, C] if batch_first) through the float GRU.")
      .def(
          "calibrate",
          [](Calibrator& c, const pyb::iterable& batches, bool batch_first) {
            for (const pyb::handle& item : batches) {
              if (pyb::isinstance<pyb::tuple>(item)) {
                const pyb::tuple t = item.cast<pyb::tuple>();
                require(t.size() == 2, "calibrate: a tuple batch must be (x, lengths)");
                observe(c, t[0], t[1], batch_first, pyb::none());
              } else {
                observe(c, pyb::reinterpret_borrow<pyb::object>(item), pyb::none(), batch_first, pyb::none());
              }
            }
            return c.cal.batches();
          },
          "batches"_a, "batch_first"_a = false,
          "observe() every item of an iterable: arrays x, or (x, lengths) tuples. Returns the batches observed so far.")
      .def_property_readonly("batches", [](const Calibrator& c) { return c.cal.batches(); })
      .def(
          "finalize",
          [](const Calibrator& c) {
            pyb::gil_scoped_release nogil;
            const std::lock_guard<std::mutex> lock(*c.busy);
            return c.cal.finalize();
          },
          "Parameters for every operator (GruQuantParams). Raises ValueError before any observe().");

  pyb::class_<QuantizedGru>(m, "QuantizedGru",
                            "The integer-only GRU: QuantizedGru(model, params) with params a GruQuantParams, a dict\n"
                            "(params()) or JSON text; or QuantizedGru.load(path) of a .fixq file (`fixq gru quantize`).\n"
                            "forward() quantizes x, runs the integer time loop and dequantizes the outputs.")
      .def(pyb::init([](const GruModel& model, const pyb::object& params) {
             const GruQuantParams p = params_arg(params);
             pyb::gil_scoped_release nogil;
             return QuantizedGru(model, p);
           }),
           "model"_a, "params"_a)
      .def_static(
          "load", [](const pyb::object& path) { return QuantizedGru::load(path_arg(path)); }, "path"_a,
          "Reads a quantized model file (.fixq, 'gru-quantized').")
      .def(
          "save", [](const QuantizedGru& q, const pyb::object& path) { q.save(path_arg(path)); }, "path"_a,
          "Writes the quantized model file (.fixq), as `fixq gru quantize` does.")
      .def("params", [](const QuantizedGru& q) { return json_loads(q.params().to_json()); },
           "The parameters as a dict: the versioned JSON of the .fixq file and of --params-out, parsed.\n"
           "QuantizedGru(model, d) takes it back; GruQuantParams.from_dict(d) gives the typed form (.op()).")
      .def_property_readonly("config", [](const QuantizedGru& q) { return q.params().config; })
      .def_property_readonly("input_size", &QuantizedGru::input_size)
      .def_property_readonly("hidden_size", &QuantizedGru::hidden_size)
      .def_property_readonly("num_layers", &QuantizedGru::num_layers)
      .def_property_readonly("bidirectional", &QuantizedGru::bidirectional)
      .def_property_readonly("cell_kind", [](const QuantizedGru& q) { return to_string(q.cell_kind()); },
                             "'reset_after' or 'reset_before' (docs/spec.md 5.4)")
      .def_property_readonly("directions", [](const QuantizedGru& q) { return q.bidirectional() ? 2 : 1; })
      .def("cell_constants", &cell_constants, "cell"_a,
           "Every integer constant of one cell ([layer * D + direction]) as the build derived it (docs/spec.md\n"
           "section 4): integer weights q_w, q_r, q_bx, q_br; fixed-point scales as {'m', 'shift'} (per-row ones\n"
           "wx_scale, rh_scale as arrays); bias constants; q_one; the tables sig_z, sig_r, tanh_g; and\n"
           "x_from_below, the rescales from the layer below's h (one per direction; empty for layer 0).")
      .def("vectorized_cells", &QuantizedGru::vectorized_cells,
           "Per cell: whether it runs the vectorised loop on this CPU (both loops compute the same integers).")
      .def("forward", &qforward, "x"_a, "h0"_a = pyb::none(), "lengths"_a = pyb::none(), "batch_first"_a = false,
           "threads"_a = 1,
           "As GruModel.forward, through the integer GRU: returns (y, h_n) float32, the dequantized integer outputs.")
      .def("__call__", &qforward, "x"_a, "h0"_a = pyb::none(), "lengths"_a = pyb::none(), "batch_first"_a = false,
           "threads"_a = 1, "Same as forward().")
      .def("stream", &make_qstream, "batch"_a = 1, "h0"_a = pyb::none(), pyb::keep_alive<0, 1>(),
           "A QuantizedGruStream (unidirectional models): the state stays integer between frames; its steps equal\n"
           "forward() bit for bit. h0: [L, B, H] or None (zeros).")
      .def("__repr__", [](const QuantizedGru& q) {
        return "QuantizedGru(input_size=" + std::to_string(q.input_size()) + ", hidden_size=" + std::to_string(q.hidden_size()) +
               ", num_layers=" + std::to_string(q.num_layers()) + ", bidirectional=" + (q.bidirectional() ? "True" : "False") +
               ", scales='" + to_string(q.params().config.scale_kind) + "')";
      });

  pyb::class_<QuantStream>(m, "QuantizedGruStream",
                           "Streaming integer GRU (from QuantizedGru.stream()): step() advances every layer by one frame.")
      .def("step", &py_stream_step<QuantizedGruStream>, "frame"_a,
           "Advances by one frame [B, C] (or [C] when B == 1); returns the top layer's h [B, H] (or [H]), dequantized.")
      .def_property_readonly(
          "state",
          &py_stream_state<QuantizedGruStream>,
          "The state [L, B, H], dequantized.")
      .def_property_readonly("batch", [](const QuantStream& s) { return s.batch; });

  bind_ptq(m);
}

}  // namespace fixq::py
