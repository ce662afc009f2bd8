// Private: the sums that a search by output error ranks its candidates with (the GRU's
// PTQ+ ranges, the whole model's ranges and auto-bits): the squared error and the three
// sums of the cosine, over pairs of floats. ErrorStats (fixq/metrics.h) is the metric a user
// reads, with five compensated sums and llama.cpp's histogram per element; a search scores
// hundreds of candidates on the same batches, and that accumulation was a third of a whole
// `fixq demo` (perf, 2026-12-02). These are plain double sums in kLanes independent partial
// sums (the compiler may keep them in one vector), added together in a fixed order: the same
// inputs give the same bits on every call, so equal outputs score equal, and each sum is
// within n 2^-53 of its exact value relative to its sum of magnitudes, far below the
// differences between candidates a search compares.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace fixq::metrics_detail {

// The cosine from its sums (ErrorStats::cosine and ErrorSums::cosine): clamped to [-1, 1];
// 1 when both vectors are zero (they agree), 0 when exactly one is.
inline double cosine_of_sums(double dot, double ref2, double app2) {
  if (ref2 == 0 || app2 == 0) return ref2 == app2 ? 1 : 0;
  const double c = dot / std::sqrt(ref2 * app2);
  return c > 1 ? 1 : (c < -1 ? -1 : c);
}

struct ErrorSums {
  static constexpr std::size_t kLanes = 8;
  double err2 = 0;  // sum (x - y)^2
  double ref2 = 0;  // sum x^2
  double app2 = 0;  // sum y^2
  double dot = 0;   // sum x y
  uint64_t count = 0;

  // Adds the pairs (reference[i], approx[i]), i < n (a NaN or infinity makes the sums
  // non-finite: finite() says so).
  void add(const float* reference, const float* approx, std::size_t n) {
    double e[kLanes] = {}, r[kLanes] = {}, a[kLanes] = {}, d[kLanes] = {};
    std::size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (std::size_t l = 0; l < kLanes; ++l) {
        const double x = reference[i + l], y = approx[i + l], diff = x - y;
        e[l] += diff * diff;
        r[l] += x * x;
        a[l] += y * y;
        d[l] += x * y;
      }
    for (std::size_t l = 0; i < n; ++i, ++l) {
      const double x = reference[i], y = approx[i], diff = x - y;
      e[l] += diff * diff;
      r[l] += x * x;
      a[l] += y * y;
      d[l] += x * y;
    }
    for (std::size_t l = 0; l < kLanes; ++l) {
      err2 += e[l];
      ref2 += r[l];
      app2 += a[l];
      dot += d[l];
    }
    count += n;
  }

  bool finite() const { return std::isfinite(err2) && std::isfinite(ref2) && std::isfinite(app2) && std::isfinite(dot); }
  // sum (x - y)^2 / n (0 for no pairs).
  double mse() const { return count == 0 ? 0.0 : err2 / static_cast<double>(count); }
  double cosine() const { return cosine_of_sums(dot, ref2, app2); }
};

}  // namespace fixq::metrics_detail
