// fixq.GruPtq: post-training quantization of the GRU (fixq/gru_ptq.h) for numpy arrays.
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "bindings.h"
#include "fixq/gru_ptq.h"
#include "gru_args.h"

namespace fixq::py {

namespace {

// The PTQ state and the model it reads (a Python reference keeps the model alive).
struct Ptq {
  GruPtq ptq;
  const GruModel* model;
  std::unique_ptr<std::mutex> busy = std::make_unique<std::mutex>();
};

GruPtqOptions ptq_options(const std::string& method, const std::string& rounding, bool bias_correction, double gptq_damp,
                          int search_sweeps, int64_t max_search_steps, double ema_decay, double percentile, int bins) {
  GruPtqOptions o;
  o.method = parse_range_method(method);
  o.rounding = parse_weight_rounding(rounding);
  o.bias_correction = bias_correction;
  o.gptq_damp = gptq_damp;
  o.search_sweeps = search_sweeps;
  o.max_search_steps = max_search_steps;
  o.ema_decay = ema_decay;
  o.percentile = percentile;
  o.bins = bins;
  o.validate();
  return o;
}

void observe(Ptq& p, const pyb::object& x, const pyb::object& lengths, bool batch_first, const pyb::object& h0) {
  const GruModel& m = *p.model;
  GruArgs a;
  make_gru_args(a, {m.input_size, m.hidden_size, m.num_layers, m.directions()}, x, h0, lengths, batch_first);
  pyb::gil_scoped_release nogil;
  const std::lock_guard<std::mutex> lock(*p.busy);
  p.ptq.observe(a.x.data(), a.x_shape, a.options);
}

pyb::dict cost_dict(const GruBitsCost& c) {
  pyb::dict d;
  d["weight_bytes"] = c.weight_bytes;
  d["macs"] = c.macs;
  d["wide_macs"] = c.wide_macs;
  d["elementwise"] = c.elementwise;
  d["wide_elementwise"] = c.wide_elementwise;
  d["work"] = c.work();
  return d;
}

}  // namespace

void bind_ptq(pyb::module_& m) {
  using namespace pybind11::literals;

  pyb::class_<GruPtqResult>(m, "GruPtqResult",
                            "What GruPtq.quantize() derives: the float model with rounded weights and corrected biases\n"
                            "(.model), the parameters (.params); QuantizedGru(model, params), or .quantized(), is the\n"
                            "integer model.")
      .def_readonly("model", &GruPtqResult::model)
      .def_readonly("params", &GruPtqResult::params)
      .def_readonly("choices", &GruPtqResult::choices, "Per cell, how each operator's range was chosen.")
      .def_readonly("calib_mse", &GruPtqResult::calib_mse, "Output squared error per element on the calibration data.")
      .def_readonly("calib_cosine", &GruPtqResult::calib_cosine, "Output cosine against float on the calibration data.")
      .def(
          "quantized",
          [](const GruPtqResult& r) {
            pyb::gil_scoped_release nogil;
            return QuantizedGru(r.model, r.params);
          },
          "The integer model, QuantizedGru(model, params).");

  pyb::class_<GruAutoBitsResult>(m, "GruAutoBitsResult", "What GruPtq.auto_bits() chose.")
      .def_readonly("result", &GruAutoBitsResult::result)
      .def_property_readonly("config", [](const GruAutoBitsResult& r) { return r.result.params.config; })
      .def_readonly("target_met", &GruAutoBitsResult::target_met)
      .def_readonly("promoted", &GruAutoBitsResult::promoted, "Operators promoted to 16 bits, in promotion order.")
      .def_property_readonly("cost", [](const GruAutoBitsResult& r) { return cost_dict(r.cost); })
      .def_property_readonly("base_cost", [](const GruAutoBitsResult& r) { return cost_dict(r.base_cost); });

  pyb::class_<Ptq>(m, "GruPtq",
                   "Post-training quantization of a GRU: observe() calibration batches, then quantize(config) or\n"
                   "auto_bits(config, target_cosine). method='auto' chooses every operator's range by the output\n"
                   "error (else one method for all, as GruCalibrator); rounding 'gptq' | 'nearest';\n"
                   "bias_correction subtracts the rounding's expected error from the biases.")
      .def(pyb::init([](const GruModel& model, const std::string& method, const std::string& rounding, bool bias_correction,
                        double gptq_damp, int search_sweeps, int64_t max_search_steps, double ema_decay, double percentile,
                        int bins) {
             return Ptq{GruPtq(model, ptq_options(method, rounding, bias_correction, gptq_damp, search_sweeps,
                                                  max_search_steps, ema_decay, percentile, bins)),
                        &model};
           }),
           "model"_a, "method"_a = "auto", "rounding"_a = "gptq", "bias_correction"_a = true, "gptq_damp"_a = 0.01,
           "search_sweeps"_a = GruPtqOptions{}.search_sweeps, "max_search_steps"_a = 1 << 14, "ema_decay"_a = 0.9, "percentile"_a = 99.99,
           "bins"_a = 2048, pyb::keep_alive<1, 2>())
      .def(
          "observe",
          [](Ptq& p, const pyb::object& x, const pyb::object& lengths, bool batch_first, const pyb::object& h0) {
            observe(p, x, lengths, batch_first, h0);
          },
          "x"_a, "lengths"_a = pyb::none(), "batch_first"_a = false, "h0"_a = pyb::none(),
          "Feeds one batch x [T, B, C] ([B, T, C] if batch_first) through the float GRU.")
      .def_property_readonly("batches", [](const Ptq& p) { return p.ptq.batches(); })
      .def(
          "quantize",
          [](const Ptq& p, const pyb::object& config, const pyb::object& scales) {
            const GruQuantConfig c = config_arg(config, scales);
            pyb::gil_scoped_release nogil;
            const std::lock_guard<std::mutex> lock(*p.busy);
            return p.ptq.quantize(c);
          },
          "config"_a = "int8", "scales"_a = pyb::none(),
          "The integer model under config ('int8' | 'int16' | GruQuantConfig | dict | JSON text | JSON file path;\n"
          "scales 'pow2' (default) | 'multiplier' for the named ones): a GruPtqResult.")
      .def(
          "auto_bits",
          [](const Ptq& p, const pyb::object& config, const pyb::object& scales, double target_cosine,
             const std::optional<double>& max_work_ratio) {
            const GruQuantConfig c = config_arg(config, scales);
            GruAutoBitsOptions o;
            o.target_cosine = target_cosine;
            o.max_work_ratio = max_work_ratio;
            pyb::gil_scoped_release nogil;
            const std::lock_guard<std::mutex> lock(*p.busy);
            return p.ptq.auto_bits(c, o);
          },
          "config"_a = "int8", "scales"_a = pyb::none(), "target_cosine"_a = 0.9999, "max_work_ratio"_a = pyb::none(),
          "Promotes the fewest operators of config to 16 bits so that the output cosine on the calibration data\n"
          "reaches target_cosine, within max_work_ratio times the config's per-step work if given.");

  m.def("gru_bits_cost", [](const GruModel& model, const pyb::object& config, const pyb::object& scales) {
    return cost_dict(gru_bits_cost(model, config_arg(config, scales)));
  }, "model"_a, "config"_a, "scales"_a = pyb::none(),
        "Weight bytes and per-step work (MACs and element-wise values, 16-bit ones counting twice) of a config.");
}

}  // namespace fixq::py
