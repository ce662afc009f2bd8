// Private: the per-unit update of the integer GRU (docs/spec.md 5.2), written once.
//
// unit_update<D> is the only statement of the formula. Each domain D evaluates it:
//   * exact int64 values: the reference loop (gru/int/step_intonly.cpp), the definition;
//   * intervals of values: build_fast_plan (gru/int/fast/plan.cpp) proves that int32 lanes are
//     exact for a cell and chooses the lane form of every scale on the way;
//   * int32 vector lanes: the fast loops (gru/int/fast/kernels_avx2.cpp, gru/int/fast/kernels_avx512.cpp).
// as gemmlowp's one FixedPoint<tRawType> body serves scalar and vector raw types.
//
// A domain D provides, for its value type D::V:
//   V sub(V a, V b), add(V a, V b)        exact integer - and +
//   V less_zp(Operand o, V v)             v - zero_point(o)
//   V plus_zp(Operand o, V v)             v + zero_point(o)
//   V sat(Operand o, V v)                 clamp to o's integer range
//   V scale(UnitScale s, V v)             the fixed-point scale s applied to v (arith.h)
//   V product(UnitScale s, V a, V b)      s applied to the exact product a * b
//   V bias(UnitBias c)                    the unit's bias in the target's LSBs plus its zero point
//   V lut(UnitLut l, V v)                 the activation table
//   V one_in_z_out()                      1 in z_out's parameters (docs/spec.md 4.3)
//
// A formula header (fixq/host_device.h): a GPU backend evaluates the same body with a
// device domain.
#pragma once

#include "fixq/host_device.h"

namespace fixq::gru_detail {

// The per-tensor operators the update reads or writes (docs/spec.md 3.2).
enum class Operand { H, Wx, Rh, ZPre, RPre, GPre, ZOut, ROut, GOut, RhAddBr, RRh, OldC, NewC };
// The fixed-point ratios of the update (docs/spec.md 4.1), each used exactly once.
enum class UnitScale { WxToZ, RhToZ, WxToR, RhToR, RhToRhab, WxToG, RrhToG, RrhMul, OldMul, NewMul, OldToH, NewToH };
inline constexpr int kUnitScales = 12;
// The per-unit constants (docs/spec.md 4.2), with their target's zero point.
enum class UnitBias { Z, R, RhAddBr, G };
enum class UnitLut { SigmoidZ, SigmoidR, TanhG };

// The unit's GEMM outputs (Wx and Rh per gate, in their operators' parameters) and its
// old state h; returns the new state h'.
template <class D>
struct UnitInputs {
  typename D::V wx_z, wx_r, wx_g, rh_z, rh_r, rh_g, h;
};

// The update in two parts, for domains that run the first part of many units before the
// second (the vector lanes: the tanh table's lookups then wait on no other unit's):
//   unit_gates:  z and the candidate's pre-activation g_pre,
//   unit_finish: g = tanh(g_pre) and h'.
template <class D>
struct UnitGates {
  typename D::V z, g_pre;
};

// The update and reset gates, z = sigmoid(Wx_z + Rh_z + b_z) and r likewise: the same in
// both cells (the reset-before cell, unit_update_reset_before.h, applies r elsewhere).
template <class D>
struct UpdateResetGates {
  typename D::V z, r;
};

template <class D>
FIXQ_HOST_DEVICE UpdateResetGates<D> unit_update_reset_gates(D& d, typename D::V wx_z, typename D::V wx_r,
                                                             typename D::V rh_z, typename D::V rh_r) {
  using O = Operand;
  using S = UnitScale;
  const auto z_pre = d.sat(O::ZPre, d.add(d.add(d.scale(S::WxToZ, d.less_zp(O::Wx, wx_z)),
                                                d.scale(S::RhToZ, d.less_zp(O::Rh, rh_z))),
                                          d.bias(UnitBias::Z)));
  const auto r_pre = d.sat(O::RPre, d.add(d.add(d.scale(S::WxToR, d.less_zp(O::Wx, wx_r)),
                                                d.scale(S::RhToR, d.less_zp(O::Rh, rh_r))),
                                          d.bias(UnitBias::R)));
  return {d.lut(UnitLut::SigmoidZ, z_pre), d.lut(UnitLut::SigmoidR, r_pre)};
}

template <class D>
FIXQ_HOST_DEVICE UnitGates<D> unit_gates(D& d, const UnitInputs<D>& in) {
  using O = Operand;
  using S = UnitScale;
  const auto [z, r] = unit_update_reset_gates(d, in.wx_z, in.wx_r, in.rh_z, in.rh_r);
  // g = tanh(Wx_g + r * (Rh_g + br_g) + bx_g): the reset applies after the recurrent
  // product (the linear-before-reset cell of PyTorch and Haste).
  const auto rh_add_br =
      d.sat(O::RhAddBr, d.add(d.scale(S::RhToRhab, d.less_zp(O::Rh, in.rh_g)), d.bias(UnitBias::RhAddBr)));
  const auto rrh = d.sat(O::RRh, d.plus_zp(O::RRh, d.product(S::RrhMul, d.less_zp(O::ROut, r),
                                                              d.less_zp(O::RhAddBr, rh_add_br))));
  const auto g_pre = d.sat(O::GPre, d.add(d.add(d.scale(S::WxToG, d.less_zp(O::Wx, in.wx_g)),
                                                d.scale(S::RrhToG, d.less_zp(O::RRh, rrh))),
                                          d.bias(UnitBias::G)));
  return {z, g_pre};
}

template <class D>
FIXQ_HOST_DEVICE typename D::V unit_finish(D& d, const UnitGates<D>& gates, typename D::V h) {
  using O = Operand;
  using S = UnitScale;
  const auto z = gates.z;
  const auto g = d.lut(UnitLut::TanhG, gates.g_pre);
  // h' = z * h + (1 - z) * g, each product in its own operator.
  const auto old_c = d.sat(O::OldC, d.plus_zp(O::OldC, d.product(S::OldMul, d.less_zp(O::ZOut, z), d.less_zp(O::H, h))));
  const auto new_c =
      d.sat(O::NewC, d.plus_zp(O::NewC, d.product(S::NewMul, d.sub(d.one_in_z_out(), z), d.less_zp(O::GOut, g))));
  return d.sat(O::H, d.plus_zp(O::H, d.add(d.scale(S::OldToH, d.less_zp(O::OldC, old_c)),
                                           d.scale(S::NewToH, d.less_zp(O::NewC, new_c)))));
}

template <class D>
FIXQ_HOST_DEVICE typename D::V unit_update(D& d, const UnitInputs<D>& in) {
  return unit_finish(d, unit_gates(d, in), in.h);
}

}  // namespace fixq::gru_detail
