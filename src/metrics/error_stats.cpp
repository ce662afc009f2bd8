// ErrorStats accumulation and the metrics derived from its sums (see fixq/metrics.h for
// the formulas and the precision contract).
#include <cmath>
#include <limits>

#include "fixq/error.h"
#include "fixq/metrics.h"
#include "metrics/error_sums.h"

namespace fixq {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// quantize-stats' bucket of an absolute error: floor(e / range * buckets) with the same
// operation order, clamped to the last bucket before the conversion so that huge errors
// cannot overflow size_t.
std::size_t histogram_bucket(double abs_err) {
  constexpr std::size_t last = ErrorStats::kHistogramBuckets - 1;
  const double pos = abs_err / ErrorStats::kHistogramRange * ErrorStats::kHistogramBuckets;
  if (pos >= static_cast<double>(last)) return last;
  return static_cast<std::size_t>(pos);  // pos >= 0: truncation is floor
}

void require_finite(float v, const char* array, std::size_t i) {
  if (!std::isfinite(v))
    fail("ErrorStats::add: ", array, "[", i, "] is ", v,
         "; only finite values can be compared");
}

}  // namespace

void ErrorStats::CompensatedSum::add(double v) {
  const double t = sum + v;
  // The low-order bits lost in t, taken from whichever operand is smaller in magnitude.
  comp += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
  sum = t;
}

void ErrorStats::CompensatedSum::merge(const CompensatedSum& other) {
  add(other.sum);
  comp += other.comp;
}

void ErrorStats::add(const float* reference, const float* approx, std::size_t n) {
  if (n == 0) return;
  require(reference != nullptr && approx != nullptr, "ErrorStats::add: null pointer for ",
          n, " elements");
  // Accumulate into a local batch so that a throw leaves *this unchanged.
  ErrorStats batch;
  for (std::size_t i = 0; i < n; ++i) {
    require_finite(reference[i], "reference", i);
    require_finite(approx[i], "approx", i);
    const double x = reference[i];
    const double y = approx[i];
    const double d = x - y;
    const double abs_d = std::fabs(d);
    batch.err2_.add(d * d);
    batch.abs_.add(abs_d);
    batch.ref2_.add(x * x);
    batch.app2_.add(y * y);
    batch.dot_.add(x * y);
    if (abs_d > batch.maxerr_) batch.maxerr_ = abs_d;
    ++batch.histogram_[histogram_bucket(abs_d)];
  }
  batch.count_ = n;
  merge(batch);
}

void ErrorStats::merge(const ErrorStats& other) {
  count_ += other.count_;
  err2_.merge(other.err2_);
  abs_.merge(other.abs_);
  ref2_.merge(other.ref2_);
  app2_.merge(other.app2_);
  dot_.merge(other.dot_);
  if (other.maxerr_ > maxerr_) maxerr_ = other.maxerr_;
  for (std::size_t k = 0; k < kHistogramBuckets; ++k) histogram_[k] += other.histogram_[k];
}

void ErrorStats::require_samples() const {
  require(count_ > 0, "ErrorStats: no samples (add() was never given any elements)");
}

double ErrorStats::rmse() const {
  require_samples();
  return std::sqrt(err2_.value() / static_cast<double>(count_));
}

double ErrorStats::nmse() const {
  require_samples();
  const double err2 = err2_.value();
  const double ref2 = ref2_.value();
  if (ref2 == 0) return err2 == 0 ? 0 : kInf;
  return err2 / ref2;
}

double ErrorStats::mae() const {
  require_samples();
  return abs_.value() / static_cast<double>(count_);
}

double ErrorStats::maxerr() const {
  require_samples();
  return maxerr_;
}

double ErrorStats::cosine() const {
  require_samples();
  // A sum of float squares lies in [2^-298, 2^256 * n] unless every element is zero, so
  // ref2 * app2 neither underflows nor overflows, and one sqrt of the product gives
  // exactly +-1 for y = +-x.
  return metrics_detail::cosine_of_sums(dot_.value(), ref2_.value(), app2_.value());
}

double ErrorStats::sqnr_db() const {
  require_samples();
  const double err2 = err2_.value();
  const double ref2 = ref2_.value();
  if (err2 == 0) return kInf;
  if (ref2 == 0) return -kInf;
  return 10 * std::log10(ref2 / err2);
}

double ErrorStats::quantile(double q) const {
  require_samples();
  require(q >= 0 && q <= 1, "ErrorStats::quantile: q = ", q, " is outside [0, 1]");
  // As find_quantile: total and running count in double, compared with >=. The running
  // count ends equal to total >= total * q, so the last bucket always qualifies.
  double total = 0;
  for (uint64_t c : histogram_) total += static_cast<double>(c);
  const double target = total * q;
  double running = 0;
  std::size_t k = 0;
  for (; k + 1 < kHistogramBuckets; ++k) {
    running += static_cast<double>(histogram_[k]);
    if (running >= target) break;
  }
  return static_cast<double>(k + 1) * kHistogramRange / kHistogramBuckets;
}

// The accumulator over one whole pair of arrays, behind the shorthands below.
static ErrorStats stats_of(const float* reference, const float* approx, std::size_t n) {
  ErrorStats s;
  s.add(reference, approx, n);
  return s;
}

// rmse(reference, approx, n) and the other one-shot metrics of fixq/metrics.h: the
// accumulator's metric of the same name over the whole pair.
#define FIXQ_WHOLE_ARRAY_METRIC(metric) \
  double metric(const float* reference, const float* approx, std::size_t n) { return stats_of(reference, approx, n).metric(); }
FIXQ_WHOLE_ARRAY_METRIC(rmse)
FIXQ_WHOLE_ARRAY_METRIC(nmse)
FIXQ_WHOLE_ARRAY_METRIC(mae)
FIXQ_WHOLE_ARRAY_METRIC(maxerr)
FIXQ_WHOLE_ARRAY_METRIC(cosine)
FIXQ_WHOLE_ARRAY_METRIC(sqnr_db)
#undef FIXQ_WHOLE_ARRAY_METRIC

}  // namespace fixq
