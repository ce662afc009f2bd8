// Closed-form expected quantization error of binned mass (calib/expected_error.h).
#include "calib/expected_error.h"

#include <algorithm>
#include <cmath>

namespace fixq::calib_detail {

namespace {

// The integral of d^2 over d in [a, b], written (b - a)(a^2 + ab + b^2) / 3 rather than
// (b^3 - a^3) / 3 so that a narrow interval far from its level loses no precision.
double integral_sq(double a, double b) { return (b - a) * (a * a + a * b + b * b) / 3.0; }

// The mean of (u - q(u))^2 for u uniform over [ua, ub] in code units (u = x / scale + zp),
// with q(u) the nearest integer clamped to [qmin, qmax].
double mean_code_error(double ua, double ub, double qmin, double qmax) {
  if (!(ub > ua)) {
    const double q = std::clamp(std::floor(ua + 0.5), qmin, qmax);
    return (ua - q) * (ua - q);
  }
  double sum = 0.0;
  // Below qmin everything becomes qmin (the half cell just below qmin rounds there too).
  if (ua < qmin) sum += integral_sq(ua - qmin, std::min(ub, qmin) - qmin);
  if (ub > qmax) sum += integral_sq(std::max(ua, qmax) - qmax, ub - qmax);
  const double l = std::max(ua, qmin), h = std::min(ub, qmax);
  if (l < h) {
    // Cell k is [k - 1/2, k + 1/2]; a whole cell contributes the integral of d^2 over
    // [-1/2, 1/2] = 1/12.
    const double kl = std::floor(l + 0.5), kh = std::floor(h + 0.5);
    if (kl == kh) {
      sum += integral_sq(l - kl, h - kl);
    } else {
      sum += integral_sq(l - kl, 0.5) + integral_sq(-0.5, h - kh) + (kh - kl - 1.0) / 12.0;
    }
  }
  return sum / (ub - ua);
}

}  // namespace

double expected_squared_error(std::span<const MassBin> bins, double scale, int32_t zp, IntRange range) {
  const double qmin = range.qmin, qmax = range.qmax, z = zp;
  double total = 0.0;
  for (const MassBin& b : bins)
    total += b.count * mean_code_error(b.lo / scale + z, b.hi / scale + z, qmin, qmax);
  return total * scale * scale;
}

}  // namespace fixq::calib_detail
