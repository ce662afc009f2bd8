// The quantized primitives (fixq/arith.h Part 3, docs/spec.md 2.5): rescale, add, multiply.
#include <cmath>

#include "fixq/arith.h"
#include "fixq/error.h"
#include "arith/int128.h"

namespace fixq {

namespace {

// A rescaled term is clamped to +-2^40 before zero points are added: any value that large
// saturates the (at most 32-bit) output anyway, and the clamp keeps the int64 sums below
// from overflowing whatever the ratio.
constexpr int64_t kTermGuard = int64_t{1} << 40;

int64_t rescaled_term(const FixedPointScale& ratio, int64_t v) {
  return saturate(ratio.apply(v), -kTermGuard, kTermGuard);
}

void check_scale(double s, const char* what) {
  require(std::isfinite(s) && s > 0.0, what, " scale ", s, " must be finite and > 0");
}

void check_range(IntRange r) {
  require(r.qmin <= r.qmax, "output range [", r.qmin, ", ", r.qmax, "] is empty");
}

int32_t clamp_to(IntRange r, int64_t v) { return static_cast<int32_t>(saturate(v, r.qmin, r.qmax)); }

}  // namespace

int32_t requantize(int64_t v, const FixedPointScale& scale, int32_t zp_out, IntRange out) {
  return clamp_to(out, rescaled_term(scale, v) + zp_out);
}

Rescale Rescale::make(double scale_in, int32_t zp_in, double scale_out, int32_t zp_out,
                      IntRange out, ScaleKind kind) {
  check_scale(scale_in, "input");
  check_scale(scale_out, "output");
  check_range(out);
  return Rescale{make_scale(scale_in / scale_out, kind), zp_in, zp_out, out};
}

int32_t Rescale::operator()(int32_t q_x) const {
  return requantize(int64_t{q_x} - zp_in, ratio, zp_out, out);
}

QuantizedAdd QuantizedAdd::make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                                double scale_out, int32_t zp_out, IntRange out, ScaleKind kind) {
  check_scale(scale_x, "x");
  check_scale(scale_y, "y");
  check_scale(scale_out, "output");
  check_range(out);
  return QuantizedAdd{make_scale(scale_x / scale_out, kind), make_scale(scale_y / scale_out, kind),
                      zp_x, zp_y, zp_out, out};
}

int32_t QuantizedAdd::operator()(int32_t q_x, int32_t q_y) const {
  const int64_t tx = rescaled_term(ratio_x, int64_t{q_x} - zp_x);
  const int64_t ty = rescaled_term(ratio_y, int64_t{q_y} - zp_y);
  return clamp_to(out, tx + ty + zp_out);
}

QuantizedMul QuantizedMul::make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                                double scale_out, int32_t zp_out, IntRange out, ScaleKind kind) {
  check_scale(scale_x, "x");
  check_scale(scale_y, "y");
  check_scale(scale_out, "output");
  check_range(out);
  // scale_x * scale_y is exact in double for float inputs (24 + 24 significant bits).
  return QuantizedMul{make_scale(scale_x * scale_y / scale_out, kind), zp_x, zp_y, zp_out, out};
}

int32_t QuantizedMul::operator()(int32_t q_x, int32_t q_y) const {
  // Differences of int32 values fit in 33 bits; their product is formed in 128 bits and
  // saturated to int64, which is exact for every operand of a format of up to 31 bits.
  const detail::int128 prod = static_cast<detail::int128>(int64_t{q_x} - zp_x) * (int64_t{q_y} - zp_y);
  const int64_t p = prod > std::numeric_limits<int64_t>::max()   ? std::numeric_limits<int64_t>::max()
                    : prod < std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::min()
                                                                  : static_cast<int64_t>(prod);
  return requantize(p, ratio, zp_out, out);
}

}  // namespace fixq
