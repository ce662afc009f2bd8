// The piecewise-uniform density of calib/binned_mass.h.
#include "calib/binned_mass.h"

#include <algorithm>

namespace fixq::calib_detail {

BinnedMass::BinnedMass(const StreamingHistogram& h, double min, double max) {
  const std::span<const uint64_t> counts = h.counts();
  prefix_.push_back(0.0);
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    const double lo = h.lo() + static_cast<double>(i) * h.width();
    const double hi = h.lo() + static_cast<double>(i + 1) * h.width();
    const MassBin bin{std::clamp(lo, min, max), std::clamp(hi, min, max), static_cast<double>(counts[i])};
    bins_.push_back(bin);
    prefix_.push_back(prefix_.back() + bin.count);
  }
}

double BinnedMass::mass_at_or_below(double x) const {
  // The last bin starting at or below x; every earlier bin lies wholly at or below x.
  const auto it =
      std::upper_bound(bins_.begin(), bins_.end(), x, [](double v, const MassBin& b) { return v < b.lo; });
  if (it == bins_.begin()) return 0.0;
  const size_t k = static_cast<size_t>(it - bins_.begin()) - 1;
  const MassBin& b = bins_[k];
  const double inside = x >= b.hi ? b.count : b.count * (x - b.lo) / (b.hi - b.lo);
  return prefix_[k] + inside;
}

double BinnedMass::value_at_mass(double m) const {
  // The first bin whose cumulative mass reaches m; it is non-empty, so the division is safe.
  const auto it = std::lower_bound(prefix_.begin() + 1, prefix_.end(), m);
  const size_t k = std::min(static_cast<size_t>(it - (prefix_.begin() + 1)), bins_.size() - 1);
  const MassBin& b = bins_[k];
  const double frac = std::clamp((m - prefix_[k]) / b.count, 0.0, 1.0);
  return b.lo + frac * (b.hi - b.lo);
}

}  // namespace fixq::calib_detail
