// The quantized primitives (fixq/arith.h Part 3, docs/spec.md 2.5): rescale, add, multiply.
#include <cmath>

#include "fixq/arith.h"
#include "fixq/error.h"

namespace fixq {

namespace {

void check_scale(double s, const char* what) {
  require(std::isfinite(s) && s > 0.0, what, " scale ", s, " must be finite and > 0");
}

void check_range(IntRange r) {
  require(r.qmin <= r.qmax, "output range [", r.qmin, ", ", r.qmax, "] is empty");
}

// The scales of the two inputs and of the output of an add or a multiply, checked.
void check_binary(double scale_x, double scale_y, double scale_out, IntRange out) {
  check_scale(scale_x, "x");
  check_scale(scale_y, "y");
  check_scale(scale_out, "output");
  check_range(out);
}

}  // namespace

Rescale Rescale::make(double scale_in, int32_t zp_in, double scale_out, int32_t zp_out,
                      IntRange out, ScaleKind kind) {
  check_scale(scale_in, "input");
  check_scale(scale_out, "output");
  check_range(out);
  return Rescale{make_scale(scale_in / scale_out, kind), zp_in, zp_out, out};
}

QuantizedAdd QuantizedAdd::make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                                double scale_out, int32_t zp_out, IntRange out, ScaleKind kind) {
  check_binary(scale_x, scale_y, scale_out, out);
  return QuantizedAdd{make_scale(scale_x / scale_out, kind), make_scale(scale_y / scale_out, kind),
                      zp_x, zp_y, zp_out, out};
}

QuantizedMul QuantizedMul::make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                                double scale_out, int32_t zp_out, IntRange out, ScaleKind kind) {
  check_binary(scale_x, scale_y, scale_out, out);
  // scale_x * scale_y is exact in double for float inputs (24 + 24 significant bits).
  return QuantizedMul{make_scale(scale_x * scale_y / scale_out, kind), zp_x, zp_y, zp_out, out};
}

}  // namespace fixq
