// Private: the lookup of an activation table (docs/spec.md 4.4), written once for the
// scalar ActivationLut::operator(), the vector lanes of the fast step and any other
// processor: a formula header (fixq/host_device.h), so it reads the table through a plain
// LutView, never through ActivationLut itself.
//
// An ops type L provides, on its value type L::V (int64 for the exact lookup, int32 lanes
// for vectors):
//   splat(int32), add, sub, shr(v, s) (logical, v >= 0), mask(v, m),
//   gather(table, index)                    table[index]
//   interp_knots(table, k, fr, shift, total) with lo = table[k], d = table[k + 1] - lo:
//                                            round_half_up((lo * 2^shift + d * fr) / 2^total),
//                                            the products and sum in 64 bits (interp_two_gathers
//                                            states it; a family may read both knots at once)
//   clamp(v, lo, hi)
#pragma once

#include <cstdint>

#include "fixq/arith.h"
#include "fixq/host_device.h"

namespace fixq::gru_detail {

// What a lookup reads of an ActivationLut (fixq/qgru.h: its accessors of the same names).
struct LutView {
  const int32_t* table = nullptr;
  int32_t input_min = 0;  // the input qmin: entry 0
  int shift = 0;          // 0: direct table; else interpolation step 2^shift inputs
  int frac_bits = 0;      // fractional bits of interpolated entries
  IntRange out;           // the output range interpolated values are clamped to
  FIXQ_HOST_DEVICE constexpr bool direct() const { return shift == 0 && frac_bits == 0; }
};

// interp_knots from two gathers and interp(lo, d, fr, shift, total), the 64-bit
// arithmetic above on values already read.
template <class L>
FIXQ_HOST_DEVICE typename L::V interp_two_gathers(const L& ops, const int32_t* table, typename L::V k, typename L::V fr,
                                                  int shift, int total) {
  const auto lo = ops.gather(table, k);
  const auto d = ops.sub(ops.gather(table, ops.add(k, ops.splat(1))), lo);
  return ops.interp(lo, d, fr, shift, total);
}

template <class L>
FIXQ_HOST_DEVICE typename L::V activation_lookup(const L& ops, const LutView& lut, typename L::V q) {
  const auto i = ops.sub(q, ops.splat(lut.input_min));
  if (lut.direct()) return ops.gather(lut.table, i);
  // Between knots k and k + 1, fr / 2^shift of the way: lo + (hi - lo) * fr / 2^shift in
  // units of 2^-(frac_bits + shift), one rounding, then the output range.
  const auto k = ops.shr(i, lut.shift), fr = ops.mask(i, (int32_t{1} << lut.shift) - 1);
  return ops.clamp(ops.interp_knots(lut.table, k, fr, lut.shift, lut.frac_bits + lut.shift), lut.out.qmin,
                   lut.out.qmax);
}

// activation_lookup's operations on one exact int64 value: the definition.
struct ExactLutOps {
  using V = int64_t;
  FIXQ_HOST_DEVICE V splat(int32_t v) const { return v; }
  FIXQ_HOST_DEVICE V add(V a, V b) const { return a + b; }
  FIXQ_HOST_DEVICE V sub(V a, V b) const { return a - b; }
  FIXQ_HOST_DEVICE V shr(V v, int s) const { return v >> s; }
  FIXQ_HOST_DEVICE V mask(V v, int32_t m) const { return v & m; }
  FIXQ_HOST_DEVICE V gather(const int32_t* table, V i) const { return table[i]; }
  FIXQ_HOST_DEVICE V interp(V lo, V d, V fr, int shift, int total) const {
    return rounding_shift_right_half_up(lo * (int64_t{1} << shift) + d * fr, total);
  }
  FIXQ_HOST_DEVICE V interp_knots(const int32_t* table, V k, V fr, int shift, int total) const {
    return interp_two_gathers(*this, table, k, fr, shift, total);
  }
  FIXQ_HOST_DEVICE V clamp(V v, int32_t lo, int32_t hi) const { return saturate(v, lo, hi); }
};

// The lookup of one value, exactly.
FIXQ_HOST_DEVICE inline int32_t lookup_exact(const LutView& lut, int32_t q) {
  return static_cast<int32_t>(activation_lookup(ExactLutOps{}, lut, q));
}

}  // namespace fixq::gru_detail
