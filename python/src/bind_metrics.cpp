// The fixq.metrics submodule (fixq/metrics.h): how far an approximation is from a
// reference, as ErrorStats and whole-array shorthands, with llama.cpp's quantize-stats
// histogram, quantiles and report line.
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>

#include "bindings.h"
#include "fixq/metrics.h"

namespace fixq::py {

namespace {

// add() runs without the GIL, so the accumulator carries its own lock: two Python threads
// adding to one ErrorStats serialize instead of racing.
struct LockedErrorStats {
  ErrorStats stats;
  mutable std::mutex mutex;
};

// The two arrays as float32, after checking that they pair up element for element.
std::pair<carray<float>, carray<float>> paired(const pyb::object& reference_obj, const pyb::object& approx_obj) {
  carray<float> reference = as_float_array(reference_obj, "reference");
  carray<float> approx = as_float_array(approx_obj, "approx");
  if (shape_of(reference) != shape_of(approx))
    fail("reference ", shape_str(shape_of(reference)), " and approx ", shape_str(shape_of(approx)),
         " must have the same shape");
  return {std::move(reference), std::move(approx)};
}

void add_arrays(LockedErrorStats& s, const pyb::object& reference_obj, const pyb::object& approx_obj) {
  const auto [reference, approx] = paired(reference_obj, approx_obj);
  const float* x = reference.data();
  const float* y = approx.data();
  const auto n = static_cast<std::size_t>(reference.size());
  pyb::gil_scoped_release nogil;
  const std::lock_guard lock(s.mutex);
  s.stats.add(x, y, n);
}

void merge_into(LockedErrorStats& s, const LockedErrorStats& other) {
  if (&s == &other) {  // merging with itself: take a snapshot first, a mutex is not recursive
    const std::lock_guard lock(s.mutex);
    const ErrorStats snapshot = s.stats;
    s.stats.merge(snapshot);
    return;
  }
  const std::scoped_lock lock(s.mutex, other.mutex);
  s.stats.merge(other.stats);
}

// A metric of the locked stats: f(const ErrorStats&).
template <class F>
auto locked(F f) {
  return [f](const LockedErrorStats& s) {
    const std::lock_guard lock(s.mutex);
    return f(s.stats);
  };
}

std::unique_ptr<LockedErrorStats> stats_of(const pyb::object& reference, const pyb::object& approx) {
  auto s = std::make_unique<LockedErrorStats>();
  add_arrays(*s, reference, approx);
  return s;
}

// A whole-array shorthand of metrics.h: metric(reference, approx, n).
template <double (*Metric)(const float*, const float*, std::size_t)>
double whole_array(const pyb::object& reference_obj, const pyb::object& approx_obj) {
  const auto [reference, approx] = paired(reference_obj, approx_obj);
  const float* x = reference.data();
  const float* y = approx.data();
  const auto n = static_cast<std::size_t>(reference.size());
  pyb::gil_scoped_release nogil;
  return Metric(x, y, n);
}

}  // namespace

void bind_metrics(pyb::module_& m) {
  pyb::module_ metrics = m.def_submodule(
      "metrics",
      "How far an approximation is from a reference: rmse, nmse, mae, maxerr, cosine, SQNR, and llama.cpp's\n"
      "quantize-stats histogram. Both arrays must have the same shape and hold finite values; they are taken\n"
      "as float32 (other real dtypes are converted first). Sums are compensated sums in double.");

  pyb::class_<LockedErrorStats>(
      metrics, "ErrorStats",
      "Streaming error statistics over pairs (x_i, y_i) of finite floats (x the reference, y the\n"
      "approximation), with the HISTOGRAM_BUCKETS = 150 bucket |x - y| histogram over [0, HISTOGRAM_RANGE = 0.03)\n"
      "of llama.cpp's quantize-stats.\n"
      "Each metric raises ValueError('... no samples ...') while count == 0. Differences are taken in\n"
      "double; every sum is Neumaier-compensated, so results stay within a few ulp of double for any n.")
      .def(pyb::init<>(), "An empty accumulator.")
      .def_readonly_static("HISTOGRAM_BUCKETS", &ErrorStats::kHistogramBuckets, "Buckets of the histogram: 150.")
      .def_readonly_static("HISTOGRAM_RANGE", &ErrorStats::kHistogramRange,
                           "Upper end of the histogram: 0.03 (bucket k holds |x-y| in [k, k+1) * 0.0002; the\n"
                           "last bucket also everything beyond).")
      .def("add", &add_arrays, pyb::arg("reference"), pyb::arg("approx"),
           "Adds the pairs (reference[i], approx[i]) of two same-shape arrays. A NaN or infinity raises\n"
           "ValueError naming the array and the flat index of the first one, and leaves the stats unchanged.")
      .def("merge", &merge_into, pyb::arg("other"),
           "Adds every pair other has seen, as if they had been passed to add() (sums agree to the\n"
           "compensated-sum bounds, not bit for bit; count, maxerr and the histogram exactly).")
      .def_property_readonly("count", locked([](const ErrorStats& s) { return s.count(); }), "Pairs added so far.")
      .def_property_readonly(
          "histogram",
          locked([](const ErrorStats& s) {
            auto out = new_array<uint64_t>({static_cast<int64_t>(ErrorStats::kHistogramBuckets)});
            std::copy(s.histogram().begin(), s.histogram().end(), out.mutable_data());
            return out;
          }),
          "The quantize-stats histogram: uint64 [150], bucket k counting |x-y| in [k, k+1) * 0.0002, the\n"
          "last bucket also every larger error.")
      .def("rmse", locked([](const ErrorStats& s) { return s.rmse(); }), "sqrt(sum (x-y)^2 / n).")
      .def("nmse", locked([](const ErrorStats& s) { return s.nmse(); }),
           "sum (x-y)^2 / sum x^2; inf when sum x^2 == 0 but the error is not, 0 when both are 0.")
      .def("mae", locked([](const ErrorStats& s) { return s.mae(); }), "sum |x-y| / n.")
      .def("maxerr", locked([](const ErrorStats& s) { return s.maxerr(); }), "max |x-y|.")
      .def("cosine", locked([](const ErrorStats& s) { return s.cosine(); }),
           "sum x*y / (|x| |y|), clamped to [-1, 1]; 1 when both are all zeros, 0 when exactly one is.")
      .def("sqnr_db", locked([](const ErrorStats& s) { return s.sqnr_db(); }),
           "10 log10(sum x^2 / sum (x-y)^2); inf when the error is exactly 0, -inf when sum x^2 == 0 but the\n"
           "error is not.")
      .def(
          "quantile",
          [](const LockedErrorStats& s, double q) {
            const std::lock_guard lock(s.mutex);
            return s.stats.quantile(q);
          },
          pyb::arg("q"),
          "llama.cpp's find_quantile: the upper edge (k+1) * 0.0002 of the first bucket k whose running count\n"
          "reaches count * q. q must lie in [0, 1].")
      .def(
          "llama_line",
          [](const LockedErrorStats& s, const std::string& name) {
            const std::lock_guard lock(s.mutex);
            return s.stats.llama_line(name);
          },
          pyb::arg("name"),
          "llama.cpp quantize-stats' report line: '%-50s: rmse %.8f, maxerr %.8f, 95pct<%.4f, median<%.4f'.")
      .def("summary", locked([](const ErrorStats& s) { return s.summary(); }),
           "'n N, nmse %.6e, mae %.8f, cosine %.8f, sqnr %.2f dB': the metrics the llama line lacks.")
      .def("__repr__", locked([](const ErrorStats& s) {
             return s.count() == 0 ? std::string("ErrorStats(n 0)") : "ErrorStats(" + s.summary() + ")";
           }));

  metrics.def("error_stats", &stats_of, pyb::arg("reference"), pyb::arg("approx"),
              "An ErrorStats holding the pairs of two same-shape arrays.");
  const char* const kShorthand = "\n\nOver two same-shape arrays of finite values; an empty pair raises ValueError (no samples).";
  metrics.def("rmse", &whole_array<&fixq::rmse>, pyb::arg("reference"), pyb::arg("approx"),
              (std::string("sqrt(mean((reference - approx)^2)).") + kShorthand).c_str());
  metrics.def("nmse", &whole_array<&fixq::nmse>, pyb::arg("reference"), pyb::arg("approx"),
              (std::string("sum (x-y)^2 / sum x^2 (inf for a zero reference with an error, 0 without).") + kShorthand).c_str());
  metrics.def("mae", &whole_array<&fixq::mae>, pyb::arg("reference"), pyb::arg("approx"),
              (std::string("mean |reference - approx|.") + kShorthand).c_str());
  metrics.def("maxerr", &whole_array<&fixq::maxerr>, pyb::arg("reference"), pyb::arg("approx"),
              (std::string("max |reference - approx|.") + kShorthand).c_str());
  metrics.def("cosine", &whole_array<&fixq::cosine>, pyb::arg("reference"), pyb::arg("approx"),
              (std::string("Cosine similarity, clamped to [-1, 1] (1 for two zero vectors, 0 for one).") + kShorthand).c_str());
  metrics.def("sqnr_db", &whole_array<&fixq::sqnr_db>, pyb::arg("reference"), pyb::arg("approx"),
              (std::string("10 log10(sum x^2 / sum (x-y)^2) in dB (inf for no error).") + kShorthand).c_str());
}

}  // namespace fixq::py
