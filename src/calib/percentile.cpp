// Percentile ranges from binned mass (calib/percentile.h).
#include "calib/percentile.h"

#include <algorithm>

namespace fixq::calib_detail {

namespace {

// The t in [0, amax] at which the mass in [-t, t] reaches `target`, by bisection: that
// mass is non-decreasing in t, and 200 halvings exhaust a double's precision.
double abs_value_at_mass(const BinnedMass& mass, double amax, double target) {
  double lo = 0.0, hi = amax;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (mass.mass_at_or_below(mid) - mass.mass_at_or_below(-mid) >= target)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

}  // namespace

Range percentile_range(const BinnedMass& mass, float min, float max, double percentile, bool symmetric) {
  if (percentile == 100.0) return {min, max};
  const double q = percentile / 100.0;
  const double n = mass.total();
  auto cut = [&](double v) {
    return static_cast<float>(std::clamp(v, static_cast<double>(min), static_cast<double>(max)));
  };
  if (symmetric) {
    const double amax = std::max(-static_cast<double>(min), static_cast<double>(max));
    const double t = abs_value_at_mass(mass, amax, q * (n - 1.0) + 0.5);
    return {cut(-t), cut(t)};
  }
  return {cut(mass.value_at_mass((1.0 - q) * (n - 1.0) + 0.5)), cut(mass.value_at_mass(q * (n - 1.0) + 0.5))};
}

}  // namespace fixq::calib_detail
