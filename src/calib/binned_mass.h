// Private: a streamed histogram read as a piecewise-uniform density, the model behind the
// Percentile and Mse observers.
#pragma once

#include <span>
#include <vector>

#include "calib/histogram.h"

namespace fixq::calib_detail {

// `count` values spread evenly over [lo, hi]; lo == hi is a point mass.
struct MassBin {
  double lo = 0.0;
  double hi = 0.0;
  double count = 0.0;
};

// The non-empty bins of a histogram, in increasing order, each cut to the observed
// [min, max] of its channel: the outer bins usually stick out beyond the data, and
// cutting them keeps the model from inventing values the channel never had.
class BinnedMass {
 public:
  // min <= max are the exact extremes of the values counted in h (h non-empty).
  BinnedMass(const StreamingHistogram& h, double min, double max);

  std::span<const MassBin> bins() const { return bins_; }
  double total() const { return prefix_.back(); }
  // The cumulative distribution: the mass at or below x, in [0, total()].
  double mass_at_or_below(double x) const;
  // Its inverse: the least x with mass_at_or_below(x) >= m, for m in (0, total()].
  double value_at_mass(double m) const;

 private:
  std::vector<MassBin> bins_;
  std::vector<double> prefix_;  // prefix_[k] = mass of bins_[0 .. k), bins_.size() + 1 entries
};

}  // namespace fixq::calib_detail
