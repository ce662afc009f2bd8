// OpValueStats: an operator's values on the evaluation data against its quantizer.
#include <algorithm>
#include <cmath>

#include "fixq/arith.h"
#include "fixq/error.h"
#include "fixq/quant.h"
#include "fixq/report.h"

namespace fixq {

namespace {

const QuantParams& per_tensor(const QuantParams& p) {
  require(p.scale.size() == 1 && p.zero_point.size() == 1, "operator range: expected per-tensor parameters, got ",
          p.scale.size(), " scales");
  return p;
}

}  // namespace

OpValueStats::OpValueStats(const QuantParams& p)
    : scale_(per_tensor(p).scale[0]), zero_point_(p.zero_point[0]), qmin_(p.scheme.format.qmin()), qmax_(p.scheme.format.qmax()) {
  range_lo_ = dequantize_value(qmin_, scale_, zero_point_);
  range_hi_ = dequantize_value(qmax_, scale_, zero_point_);
}

void OpValueStats::observe(const float* v, int64_t n) {
  // round_half_even(x / scale) against [qmin - zp, qmax - zp]: quantize's own test for
  // saturation (src/quant/kernels.h), with x / scale in float32 as it computes it.
  const double lo = static_cast<double>(qmin_) - zero_point_, hi = static_cast<double>(qmax_) - zero_point_;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) continue;  // the float GRU rejects non-finite input; never here
    const double t = round_half_even(static_cast<double>(v[i] / scale_));
    below_ += t < lo;
    above_ += t > hi;
    if (count_ == 0) min_ = max_ = v[i];
    min_ = std::min(min_, v[i]);
    max_ = std::max(max_, v[i]);
    ++count_;
  }
}

void OpValueStats::fix_bins(int bins) {
  bins_lo_ = std::min<double>(min_, range_lo_);
  bins_hi_ = std::max<double>(max_, range_hi_);
  if (!(bins_hi_ > bins_lo_)) bins_hi_ = bins_lo_ + 1;
  bins_.assign(static_cast<size_t>(bins), 0);
}

void OpValueStats::bin(const float* v, int64_t n) {
  if (bins_.empty()) fail("OpValueStats::bin before fix_bins");
  const auto nb = static_cast<double>(bins_.size());
  const double per_unit = nb / (bins_hi_ - bins_lo_);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) continue;
    // Clamped in double before the cast: a value at bins_hi_ falls in the last bin.
    const double k = std::clamp(std::floor((v[i] - bins_lo_) * per_unit), 0.0, nb - 1);
    ++bins_[static_cast<size_t>(k)];
  }
}

}  // namespace fixq
