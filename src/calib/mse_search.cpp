// The Mse observer's search over clipping ranges (calib/mse_search.h).
#include "calib/mse_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "calib/expected_error.h"

namespace fixq::calib_detail {

namespace {

constexpr int kSteps = 200;    // candidate fractions per scan
constexpr int kOctaves = 10;   // ... from 1 down to 2^-kOctaves
constexpr int kRefine = 16;    // refining fractions between the neighbours of a scan's best
constexpr int kMaxRounds = 8;  // coordinate-descent rounds (they converge in 2-3)

// f_k = 2^(-kOctaves * k / (kSteps - 1)): 1 for k = 0, then 3.5% narrower per step.
double fraction(int k) { return std::exp2(-static_cast<double>(kOctaves) * k / (kSteps - 1)); }

struct Candidate {
  Range range;
  double error = std::numeric_limits<double>::infinity();
};

// Keeps r if it beats best by more than rounding noise: ties stay with the candidate found
// first, and scans run from wide to narrow.
bool keep_if_better(Candidate& best, Range r, double error) {
  if (!(error < best.error * (1.0 - 1e-12))) return false;
  best = {r, error};
  return true;
}

// Scores a channel's candidate ranges under the target's format, symmetry and scale kind,
// with the parameters params_from_ranges derives for them.
class Scorer {
 public:
  Scorer(const BinnedMass& mass, const QuantScheme& target) : mass_(mass), scheme_(target) {
    scheme_.granularity = Granularity::PerTensor;  // each channel is scored alone
    scheme_.axis = 0;
    scheme_.group_size = 0;
  }

  const QuantScheme& scheme() const { return scheme_; }

  QuantParams params(Range r) const {
    return params_from_ranges(scheme_, Shape{1}, std::span<const Range>(&r, 1));
  }

  // Expected squared error, or +inf for a range params_from_ranges would reject: zero
  // width, or a scale below 4 FLT_MIN (a margin for the symmetric and rounded cases).
  double score(Range r) const {
    const double lo = std::min(r.min, 0.0f), hi = std::max(r.max, 0.0f);
    const double levels = scheme_.format.qmax() - scheme_.format.qmin();
    if (!(r.min < r.max) || hi - lo < 4.0 * std::numeric_limits<float>::min() * levels)
      return std::numeric_limits<double>::infinity();
    const QuantParams p = params(r);
    return expected_squared_error(mass_.bins(), p.scale[0], p.zero_point[0], scheme_.format.range());
  }

  bool offer(Candidate& best, Range r) const { return keep_if_better(best, r, score(r)); }

 private:
  const BinnedMass& mass_;
  QuantScheme scheme_;
};

// Offers range_of(f) for the kSteps grid fractions, then for kRefine - 1 fractions
// spread geometrically between the grid neighbours of the best one: the error can be
// steep where a single extreme value starts to be clipped, and 3.5% steps would miss its
// minimum by up to ~2%. Returns the best f, or `current` if nothing beat `best`.
template <class RangeOf>
double best_fraction(const Scorer& sc, Candidate& best, double current, RangeOf range_of) {
  int k_best = -1;
  for (int k = 0; k < kSteps; ++k)
    if (sc.offer(best, range_of(fraction(k)))) k_best = k;
  if (k_best < 0) return current;
  double f_best = fraction(k_best);
  const double wide = fraction(std::max(k_best - 1, 0)), narrow = fraction(std::min(k_best + 1, kSteps - 1));
  for (int i = 1; i < kRefine; ++i) {
    const double f = wide * std::pow(narrow / wide, static_cast<double>(i) / kRefine);
    if (sc.offer(best, range_of(f))) f_best = f;
  }
  return f_best;
}

Range float_symmetric(const Scorer& sc, double a, double b) {
  const double amax = std::max(-a, b);
  Candidate best{{static_cast<float>(a), static_cast<float>(b)}};
  best_fraction(sc, best, 1.0, [&](double f) {
    const double t = amax * f;
    return Range{static_cast<float>(std::max(-t, a)), static_cast<float>(std::min(t, b))};
  });
  return best.range;
}

Range float_asymmetric(const Scorer& sc, double a, double b) {
  auto candidate = [&](double f_lo, double f_hi) {
    return Range{static_cast<float>(a * f_lo), static_cast<float>(b * f_hi)};
  };
  Candidate best{candidate(1.0, 1.0)};
  // Shrinking both sides together finds the bulk even when both tails are long ...
  double f_lo = best_fraction(sc, best, 1.0, [&](double f) { return candidate(f, f); });
  double f_hi = f_lo;
  // ... then each side moves alone, for skewed data. Each accepted move strictly lowers
  // the error, so this terminates; the round limit only bounds the time.
  for (int round = 0; round < kMaxRounds; ++round) {
    const double lo0 = f_lo, hi0 = f_hi;
    if (b > 0.0) f_hi = best_fraction(sc, best, f_hi, [&](double f) { return candidate(f_lo, f); });
    if (a < 0.0) f_lo = best_fraction(sc, best, f_lo, [&](double f) { return candidate(f, f_hi); });
    if (f_lo == lo0 && f_hi == hi0) break;
  }
  return best.range;
}

// Offers every integer L in [lo, hi] when there are few, else probes 65 evenly spaced
// values and recurses around the best probe. The error is nearly unimodal in L (sliding
// the window trades clipping on one side for clipping on the other); the final exhaustive
// pass over <= 129 values absorbs the ripple of the rounding cells.
template <class Window>
void scan_windows(const Scorer& sc, Candidate& best, int64_t lo, int64_t hi, Window window) {
  while (hi - lo > 128) {
    const int64_t step = (hi - lo + 63) / 64;
    int64_t best_l = lo;
    double best_err = std::numeric_limits<double>::infinity();
    for (int64_t l = lo; l <= hi; l += step) {
      const double err = sc.score(window(l));
      keep_if_better(best, window(l), err);
      if (err < best_err) {
        best_err = err;
        best_l = l;
      }
    }
    lo = std::max(lo, best_l - step);
    hi = std::min(hi, best_l + step);
  }
  for (int64_t l = lo; l <= hi; ++l) sc.offer(best, window(l));
}

Range power_of_two(const Scorer& sc, float min, float max) {
  const QuantScheme& s = sc.scheme();
  const int32_t qmin = s.format.qmin(), qmax = s.format.qmax();
  const int e0 = sc.params({min, max}).exponent[0];  // the finest exponent covering [min, max]
  Candidate best{{std::min(min, 0.0f), std::max(max, 0.0f)}};
  for (int e = e0; e <= e0 + kOctaves; ++e) {
    const float step = std::ldexp(1.0f, -e);
    if (s.symmetry == Symmetry::Symmetric) {
      const int32_t zp = s.symmetric_zero_point();
      sc.offer(best, {static_cast<float>(qmin - zp) * step, static_cast<float>(qmax - zp) * step});
      continue;
    }
    // Asymmetric: the levels are the multiples of `step` whatever the zero point, which
    // only picks the window [l, l + n] of them that is representable (l = qmin - zp, and
    // the window must hold 0: l in [-n, 0]). Products of small integers and a power of
    // two are exact, so params_from_ranges recovers exactly this e and zero point.
    const double n = static_cast<double>(qmax) - qmin;
    auto window = [&](int64_t l) {
      return Range{static_cast<float>(l) * step, static_cast<float>(static_cast<double>(l) + n) * step};
    };
    // The least l whose window reaches max, and the greatest whose window reaches min.
    const double l_max = std::clamp(std::ceil(max / static_cast<double>(step)) - n, -n, 0.0);
    const double l_min = std::clamp(std::floor(min / static_cast<double>(step)), -n, 0.0);
    if (l_max <= l_min) {
      // Windows covering all data round every value to the same grid: equal errors.
      sc.offer(best, window(static_cast<int64_t>(std::floor(0.5 * (l_max + l_min)))));
    } else {
      // Too narrow to cover: the best window lies between the one touching min and the
      // one touching max (any window further out clips more and gains nothing).
      scan_windows(sc, best, static_cast<int64_t>(l_min), static_cast<int64_t>(l_max), window);
    }
  }
  return best.range;
}

}  // namespace

Range mse_range(const BinnedMass& mass, float min, float max, const QuantScheme& target) {
  const Scorer sc(mass, target);
  if (target.scale_kind == ScaleKind::PowerOfTwo) return power_of_two(sc, min, max);
  const double a = std::min(min, 0.0f), b = std::max(max, 0.0f);
  return target.symmetry == Symmetry::Symmetric ? float_symmetric(sc, a, b) : float_asymmetric(sc, a, b);
}

}  // namespace fixq::calib_detail
