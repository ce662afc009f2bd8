// fixq.Observer: streamed calibration statistics (fixq/calib.h) over numpy batches.
#include <string>
#include <vector>

#include "bindings.h"
#include "fixq/calib.h"

namespace fixq::py {

namespace {

ObserverConfig make_observer_config(const std::string& method, bool per_channel, int axis, double ema_decay,
                                    double percentile, int bins) {
  ObserverConfig c;
  c.method = parse_calib_method(method);
  c.per_channel = per_channel;
  c.axis = axis;
  c.ema_decay = ema_decay;
  c.percentile = percentile;
  c.bins = bins;
  c.validate();
  return c;
}

}  // namespace

void bind_calib(pyb::module_& m) {
  using namespace pybind11::literals;

  pyb::class_<Observer>(m, "Observer",
                        "Streamed calibration statistics: observe() batches, then ranges(scheme) -> [n, 2] (min, max)\n"
                        "for params_from_ranges. Methods: 'minmax', 'ema' (m = d*m_old + (1-d)*m_batch per batch),\n"
                        "'percentile' ([100-p, p] of a streamed histogram), 'mse' (clipping range minimising the\n"
                        "expected squared quantization error under the target scheme).")
      .def(pyb::init([](const std::string& method, bool per_channel, int axis, double ema_decay, double percentile, int bins) {
             return Observer(make_observer_config(method, per_channel, axis, ema_decay, percentile, bins));
           }),
           "method"_a = "minmax", "per_channel"_a = false, "axis"_a = 0, "ema_decay"_a = 0.9, "percentile"_a = 99.99,
           "bins"_a = 2048)
      .def(
          "observe",
          [](Observer& o, const pyb::object& x_obj) {
            const carray<float> x = as_float_array(x_obj, "x");
            pyb::gil_scoped_release nogil;
            o.observe(x.data(), shape_of(x));
          },
          "x"_a, "Accumulates one batch (one EMA step). NaN / Inf or a changed channel count raise ValueError.")
      .def(
          "ranges",
          [](const Observer& o, const QuantScheme& target) {
            std::vector<Range> r;
            {
              pyb::gil_scoped_release nogil;
              r = o.ranges(target);
            }
            std::vector<float> v;
            for (const Range& x : r) {
              v.push_back(x.min);
              v.push_back(x.max);
            }
            return to_numpy(std::move(v), Shape{static_cast<int64_t>(r.size()), 2});
          },
          "scheme"_a,
          "float32 [n, 2] ranges for params_from_ranges(scheme, shape, ranges); the scheme's granularity must match\n"
          "the observer's (per_tensor, or per_channel on the same axis).")
      .def("reset", &Observer::reset, "Forgets every observation; keeps the configuration.")
      .def_property_readonly("channels", &Observer::channels)
      .def_property_readonly("batches", &Observer::batches)
      .def_property_readonly("method", [](const Observer& o) { return to_string(o.config().method); });
}

}  // namespace fixq::py
