// Quantization parameters from calibrated ranges (docs/spec.md 3.3), never clipping the range.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fixq/error.h"
#include "fixq/quant.h"
#include "quant/runs.h"

namespace fixq {

namespace {

struct SlotParams {
  float scale;
  int32_t exponent;
  int32_t zero_point;
};

// Exponents e whose scale 2^-e is a normal float that keeps scale * 2^17 finite.
constexpr int kMinExponent = -110;
constexpr int kMaxExponent = 126;

bool covers(float scale, int32_t zp, int32_t qmin, int32_t qmax, float lo, float hi) {
  return dequantize_value(qmin, scale, zp) <= lo && dequantize_value(qmax, scale, zp) >= hi;
}

void check_scale_usable(double s, size_t slot, Range r) {
  require(s >= std::numeric_limits<float>::min() && s * 131072.0 < std::numeric_limits<float>::max(),
          "range [", r.min, ", ", r.max, "] of slot ", slot, " needs scale ", s,
          ", outside what a float32 scale can hold");
}

// The smallest float scale >= s_needed that leaves [lo, hi] unclipped with zero point zp.
float cover_scale(double s_needed, int32_t zp, int32_t qmin, int32_t qmax, float lo, float hi,
                  size_t slot, Range r) {
  check_scale_usable(s_needed, slot, r);
  float s = static_cast<float>(s_needed);
  // The conversion and the float products can each lose half an ulp: step up until the
  // float evaluation covers the range too (a few ulps at most).
  for (int i = 0; i < 64 && !covers(s, zp, qmin, qmax, lo, hi); ++i)
    s = std::nextafter(s, std::numeric_limits<float>::infinity());
  require(covers(s, zp, qmin, qmax, lo, hi), "internal: no float scale covers [", lo, ", ", hi, "]");
  return s;
}

// The scale a zero point zp needs so that [lo, hi] is covered: each side's extent divided
// by the number of steps the zero point leaves on that side (0 if a side is impossible).
double needed_scale(int64_t zp, int32_t qmin, int32_t qmax, float lo, float hi) {
  double s = 0.0;
  if (hi > 0.0f) s = zp < qmax ? std::max(s, hi / static_cast<double>(qmax - zp)) : INFINITY;
  if (lo < 0.0f) s = zp > qmin ? std::max(s, lo / static_cast<double>(qmin - zp)) : INFINITY;
  return s;
}

SlotParams float_asymmetric(const QuantScheme& sc, float lo, float hi, size_t slot, Range r) {
  const int32_t qmin = sc.format.qmin(), qmax = sc.format.qmax();
  const double s0 = (static_cast<double>(hi) - lo) / (qmax - qmin);
  check_scale_usable(s0, slot, r);
  // The ideal zero point qmin - lo / s0 is rarely an integer; of its two integer
  // neighbours take the one that needs the smaller scale to cover both ends. That costs at
  // most a factor (qmax - qmin) / (qmax - qmin - 2) over s0.
  const double ideal = qmin - lo / s0;
  int64_t best_zp = qmin;
  double best = INFINITY;
  for (const double c : {std::floor(ideal), std::ceil(ideal)}) {
    const int64_t zp = saturate(static_cast<int64_t>(c), qmin, qmax);
    const double s = needed_scale(zp, qmin, qmax, lo, hi);
    if (s < best) best = s, best_zp = zp;
  }
  const int32_t z = static_cast<int32_t>(best_zp);
  return {cover_scale(std::max(best, s0), z, qmin, qmax, lo, hi, slot, r), 0, z};
}

SlotParams float_symmetric(const QuantScheme& sc, float lo, float hi, size_t slot, Range r) {
  const int32_t qmin = sc.format.qmin(), qmax = sc.format.qmax(), zp = sc.symmetric_zero_point();
  const double amax = std::max(-static_cast<double>(lo), static_cast<double>(hi));
  const double s = amax / (qmax - zp);
  return {cover_scale(s, zp, qmin, qmax, lo, hi, slot, r), 0, zp};
}

// Largest e (finest scale 2^-e) for which a zero point in [qmin, qmax] covers [lo, hi].
SlotParams pow2_params(const QuantScheme& sc, float lo, float hi, size_t slot, Range r) {
  const int32_t qmin = sc.format.qmin(), qmax = sc.format.qmax();
  const bool symmetric = sc.symmetry == Symmetry::Symmetric;
  const double width = symmetric ? 2.0 * std::max(-static_cast<double>(lo), static_cast<double>(hi))
                                 : static_cast<double>(hi) - lo;
  // Coverage needs width * 2^e <= qmax - qmin, an upper bound for e; search down from it.
  int e = static_cast<int>(std::floor(std::log2((qmax - qmin) / width))) + 1;
  e = std::min(e, kMaxExponent + 1);
  for (; e >= kMinExponent; --e) {
    // lo * 2^e and hi * 2^e are exact in double for these exponents.
    const double l = std::ldexp(static_cast<double>(lo), e), h = std::ldexp(static_cast<double>(hi), e);
    int64_t zp;
    if (symmetric) {
      zp = sc.symmetric_zero_point();
      if (qmin - zp > l || qmax - zp < h) continue;
    } else {
      const double zlo = std::ceil(qmin - l), zhi = std::floor(qmax - h);  // feasible zero points
      if (zlo > zhi) continue;
      // A power-of-two grid usually has spare steps: centre the range in it, so that
      // values a little beyond the calibrated range on either side still fit.
      const double centre = round_half_even(0.5 * (qmin + qmax) - 0.5 * (l + h));
      zp = static_cast<int64_t>(std::clamp(centre, zlo, zhi));
    }
    require(e <= kMaxExponent, "range [", r.min, ", ", r.max, "] of slot ", slot,
            " is too narrow for a power-of-two scale (needs 2^-", e, " < 2^-", kMaxExponent, ")");
    const float s = std::ldexp(1.0f, -e);
    return {s, e, static_cast<int32_t>(zp)};
  }
  fail("range [", r.min, ", ", r.max, "] of slot ", slot, " is too wide for a power-of-two scale");
}

SlotParams derive(const QuantScheme& sc, Range r, size_t slot) {
  require(!std::isnan(r.min) && !std::isnan(r.max), "range of slot ", slot, " is NaN");
  require(std::isfinite(r.min) && std::isfinite(r.max), "range [", r.min, ", ", r.max, "] of slot ",
          slot, " is not finite");
  require(r.min <= r.max, "range of slot ", slot, " has min ", r.min, " > max ", r.max);
  require(r.min < r.max, "range of slot ", slot, " has zero width (min == max == ", r.min,
          "): no scale can be derived; widen the range or leave this slot unquantized");
  // Real zero must be exactly representable (it becomes the zero point), so the range is
  // widened to contain it.
  const float lo = std::min(r.min, 0.0f), hi = std::max(r.max, 0.0f);
  if (sc.scale_kind == ScaleKind::PowerOfTwo) return pow2_params(sc, lo, hi, slot, r);
  return sc.symmetry == Symmetry::Symmetric ? float_symmetric(sc, lo, hi, slot, r)
                                            : float_asymmetric(sc, lo, hi, slot, r);
}

}  // namespace

QuantParams params_from_ranges(const QuantScheme& scheme, const Shape& tensor_shape,
                               std::span<const Range> ranges) {
  QuantParams p;
  p.scheme = scheme;
  p.shape = scheme.param_shape(tensor_shape);
  const size_t n = static_cast<size_t>(numel(p.shape));
  if (ranges.size() != n)
    fail(to_string(scheme.granularity), " quantization of shape ", shape_str(tensor_shape), " needs ", n,
         " ranges, got ", ranges.size());
  p.scale.resize(n);
  p.zero_point.resize(n);
  if (scheme.scale_kind == ScaleKind::PowerOfTwo) p.exponent.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const SlotParams s = derive(scheme, ranges[i], i);
    p.scale[i] = s.scale;
    p.zero_point[i] = s.zero_point;
    if (scheme.scale_kind == ScaleKind::PowerOfTwo) p.exponent[i] = s.exponent;
  }
  return p;
}

std::vector<Range> minmax_ranges(const float* x, const Shape& shape, const QuantScheme& scheme) {
  const Shape ps = scheme.param_shape(shape);
  require(x != nullptr, "minmax_ranges: null data pointer");
  std::vector<Range> r(static_cast<size_t>(numel(ps)),
                       Range{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()});
  auto update = [&](int64_t i, Range& slot) {
    const float v = x[i];
    require(std::isfinite(v), "element ", i, " is ", v, ": ranges need finite data");
    slot.min = std::min(slot.min, v);
    slot.max = std::max(slot.max, v);
  };
  quant_detail::for_each_run(scheme, shape, [&](int64_t off, int64_t len, int64_t poff, bool per_elem) {
    for (int64_t i = 0; i < len; ++i) update(off + i, r[static_cast<size_t>(per_elem ? poff + i : poff)]);
  });
  return r;
}

QuantParams params_from_tensor(const float* x, const Shape& shape, const QuantScheme& scheme) {
  const std::vector<Range> r = minmax_ranges(x, shape, scheme);
  return params_from_ranges(scheme, shape, r);
}

}  // namespace fixq
