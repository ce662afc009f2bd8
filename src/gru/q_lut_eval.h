// Private: the lookup of an ActivationLut (docs/spec.md 4.4), written once for the scalar
// operator() and the vector lanes of the fast step. An ops type L provides, on its value
// type L::V (int64 for the scalar lookup, int32 lanes for vectors):
//   splat(int32), add, sub, shr(v, s) (logical, v >= 0), mask(v, m),
//   gather(table, index)                    table[index]
//   interp_knots(table, k, fr, shift, total) with lo = table[k], d = table[k + 1] - lo:
//                                            round_half_up((lo * 2^shift + d * fr) / 2^total),
//                                            the products and sum in 64 bits (interp_two_gathers
//                                            states it; a family may read both knots at once)
//   clamp(v, lo, hi)
#pragma once

#include "fixq/qgru.h"

namespace fixq::gru_detail {

// interp_knots from two gathers and interp(lo, d, fr, shift, total), the 64-bit
// arithmetic above on values already read.
template <class L>
typename L::V interp_two_gathers(const L& ops, const int32_t* table, typename L::V k, typename L::V fr, int shift,
                                 int total) {
  const auto lo = ops.gather(table, k);
  const auto d = ops.sub(ops.gather(table, ops.add(k, ops.splat(1))), lo);
  return ops.interp(lo, d, fr, shift, total);
}

template <class L>
typename L::V activation_lookup(const L& ops, const ActivationLut& lut, typename L::V q) {
  const int32_t* table = lut.table().data();
  const auto i = ops.sub(q, ops.splat(lut.input_min()));
  if (lut.direct()) return ops.gather(table, i);
  // Between knots k and k + 1, fr / 2^shift of the way: lo + (hi - lo) * fr / 2^shift in
  // units of 2^-(frac_bits + shift), one rounding, then the output range.
  const auto k = ops.shr(i, lut.shift()), fr = ops.mask(i, (int32_t{1} << lut.shift()) - 1);
  const IntRange out = lut.output_range();
  return ops.clamp(ops.interp_knots(table, k, fr, lut.shift(), lut.frac_bits() + lut.shift()), out.qmin, out.qmax);
}

}  // namespace fixq::gru_detail
