// Rounding helpers and fixed-point scales (fixq/arith.h, Parts 1 and 2).
#include <cmath>
#include <utility>

#include "fixq/arith.h"
#include "fixq/error.h"

namespace fixq {

double round_half_even(double x) {
  // Every double of magnitude >= 2^52 is an integer already; NaN and Inf pass through.
  if (!(std::fabs(x) < 0x1p52)) return x;
  const double lower = std::floor(x);
  const double frac = x - lower;  // exact: x and lower share the binade or lower == 0
  if (frac < 0.5) return lower;
  if (frac > 0.5) return lower + 1.0;
  return std::fmod(lower, 2.0) == 0.0 ? lower : lower + 1.0;
}

int64_t round_half_even_saturate(double x, int64_t lo, int64_t hi) {
  if (std::isnan(x)) return lo;
  const double r = round_half_even(x);
  // Compare in double before converting: the cast is only done on in-range values.
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

FixedPointScale FixedPointScale::from_real(double sigma) {
  require(std::isfinite(sigma) && sigma >= kMinReal && sigma <= kMaxReal,
          "fixed-point scale ", sigma, " is outside the supported range [2^-40, 2^20]",
          " (a ratio of quantization scales this far from 1 means mismatched scales)");
  int e = 0;
  const double f = std::frexp(sigma, &e);  // sigma = f * 2^e, f in [0.5, 1)
  FixedPointScale s;
  // f * 2^31 is exact; rounding it to an integer is the one approximation made here.
  double m = round_half_even(std::ldexp(f, 31));
  s.shift = 31 - e;
  if (m == 0x1p31) {  // f rounded up to 1: renormalize so that m still fits in int32
    m = 0x1p30;
    s.shift -= 1;
  }
  s.m = static_cast<int32_t>(m);
  return s;
}

FixedPointScale FixedPointScale::pow2(int n) {
  require(n >= -62 && n <= 126, "power-of-two scale 2^", -n, " is outside [2^-126, 2^62]");
  FixedPointScale s;
  s.m = 1;
  s.shift = n;
  return s;
}

double FixedPointScale::real() const { return std::ldexp(static_cast<double>(m), -shift); }

std::string to_string(ScaleKind kind) { return kind == ScaleKind::PowerOfTwo ? "pow2" : "multiplier"; }

ScaleKind parse_scale_kind(std::string_view text, std::string_view what) {
  if (text == "pow2") return ScaleKind::PowerOfTwo;
  if (text == "multiplier") return ScaleKind::Multiplier;
  for (const auto& [old, kind] : {std::pair{"power-of-two", ScaleKind::PowerOfTwo}, std::pair{"float", ScaleKind::Multiplier}})
    if (text == old) {
      note_deprecated_spelling(what, text, to_string(kind));
      return kind;
    }
  fail(what, " must be pow2 or multiplier, got '", text, "'");
}

FixedPointScale make_scale(double sigma, ScaleKind kind) {
  require(std::isfinite(sigma) && sigma > 0.0, "scale ratio ", sigma, " must be finite and > 0");
  if (kind == ScaleKind::Multiplier) return FixedPointScale::from_real(sigma);
  int e = 0;
  const double f = std::frexp(sigma, &e);
  require(f == 0.5, "scale ratio ", sigma,
          " is not a power of two; pow2 scales need power-of-two ratios"
          " (or use multiplier scales)");
  return FixedPointScale::pow2(1 - e);  // sigma = 2^(e-1) = 2^-(1-e)
}

}  // namespace fixq
