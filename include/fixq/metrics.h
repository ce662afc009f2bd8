// fixq/metrics.h — how far an approximation y is from a reference x.
//
// ErrorStats streams over pairs (x_i, y_i) of finite floats and reports
//   rmse    = sqrt(sum (x-y)^2 / n)
//   nmse    = sum (x-y)^2 / sum x^2
//   mae     = sum |x-y| / n
//   maxerr  = max |x-y|
//   cosine  = sum x*y / (sqrt(sum x^2) * sqrt(sum y^2))
//   sqnr_db = 10 * log10(sum x^2 / sum (x-y)^2)
// and the error histogram of llama.cpp's quantize-stats tool (150 buckets of |x-y| over
// [0, 0.03)), whose quantiles and report line reproduce that tool's output.
//
// Precision: each difference x-y is taken in double (exact unless the exponents of x and
// y are more than 28 apart, then off by at most 2^-53 relative); products of two floats
// are exact in double. Every sum is a Neumaier-compensated double sum, so its error stays
// within a few ulp of double regardless of n (1e8 elements and far beyond), plus, for the
// sign-mixed sum x*y, a few ulp of sum |x*y|. merge() adds sums and their compensations,
// so merged and sequential results agree to those bounds, not bit for bit; counts,
// maxerr and the histogram are exact and identical either way.
//
// Differences from llama.cpp: it forms x-y in float before widening to double, we in
// double, so an error within a float rounding of a bucket edge may land one bucket apart;
// and it casts an out-of-range bucket index to size_t (undefined for huge errors) where
// we clamp to the last bucket first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fixq {

class ErrorStats {
 public:
  // The quantize-stats histogram: bucket k holds |x-y| in [k, k+1) * kHistogramRange /
  // kHistogramBuckets, the last bucket also everything beyond kHistogramRange.
  static constexpr std::size_t kHistogramBuckets = 150;
  static constexpr double kHistogramRange = 0.03;
  using Histogram = std::array<uint64_t, kHistogramBuckets>;

  // Adds the n pairs (reference[i], approx[i]). Throws fixq::Error naming the array and
  // index of the first NaN or infinity, or for a null pointer with n > 0; on a throw the
  // accumulator is unchanged.
  void add(const float* reference, const float* approx, std::size_t n);

  // Adds every pair other has seen, as if they had been passed to add().
  void merge(const ErrorStats& other);

  uint64_t count() const { return count_; }
  const Histogram& histogram() const { return histogram_; }

  // Each accessor below throws fixq::Error "no samples" while count() == 0.
  double rmse() const;
  // +inf when sum x^2 == 0 but the error is not zero; 0 when both are zero.
  double nmse() const;
  double mae() const;
  double maxerr() const;
  // Clamped to [-1, 1]. Defined for zero vectors instead of dividing 0 by 0: 1 when
  // reference and approx are both all zeros (they agree), 0 when exactly one is.
  double cosine() const;
  // +inf when the error is exactly zero; -inf when sum x^2 == 0 but the error is not.
  double sqnr_db() const;

  // llama.cpp's find_quantile: the upper edge (k+1) * kHistogramRange / kHistogramBuckets
  // of the first bucket k at which the running count reaches count() * q (compared in
  // double). So q = 0 gives the first edge 0.03/150 (printed 0.0002) and the last bucket
  // gives 0.03, never +inf. Throws for q outside [0, 1].
  double quantile(double q) const;

  // llama.cpp's report line, without the newline:
  //   "%-50s: rmse %.8f, maxerr %.8f, 95pct<%.4f, median<%.4f"
  // with name padded to 50 columns (never cut), 95pct = quantile(0.95) and median =
  // quantile(0.5).
  std::string llama_line(const std::string& name) const;

  // "n N, nmse %.6e, mae %.8f, cosine %.8f, sqnr %.2f dB": the metrics the llama line
  // lacks. Infinite values print as "inf".
  std::string summary() const;

 private:
  // Neumaier's compensated sum: the exact sum is sum + comp up to a few ulp.
  struct CompensatedSum {
    double sum = 0;
    double comp = 0;
    void add(double v);
    void merge(const CompensatedSum& other);
    double value() const { return sum + comp; }
  };

  void require_samples() const;

  uint64_t count_ = 0;
  CompensatedSum err2_;  // sum (x-y)^2
  CompensatedSum abs_;   // sum |x-y|
  CompensatedSum ref2_;  // sum x^2
  CompensatedSum app2_;  // sum y^2
  CompensatedSum dot_;   // sum x*y
  double maxerr_ = 0;
  Histogram histogram_{};
};

// Whole-array shorthands: ErrorStats over n pairs, then the one metric. They throw as
// ErrorStats::add and its accessors do (so n == 0 gives "no samples").
double rmse(const float* reference, const float* approx, std::size_t n);
double nmse(const float* reference, const float* approx, std::size_t n);
double mae(const float* reference, const float* approx, std::size_t n);
double maxerr(const float* reference, const float* approx, std::size_t n);
double cosine(const float* reference, const float* approx, std::size_t n);
double sqnr_db(const float* reference, const float* approx, std::size_t n);

}  // namespace fixq
