// Private: the per-unit update of the integer reset-before GRU (docs/spec.md 5.4), written
// once, beside the reset-after cell's (gru/int/unit_update.h), whose domains it reuses.
//
// The reset gate meets the state before the recurrent product, so a step has three parts
// with a GEMM between the first two:
//   unit_reset_gates:      z, r from the Wx and Rh rows of z and r, and r * h in h's own
//                          parameters (the input of the product R_g (r * h));
//   (the GEMM R_g (r * h) -> Rh_g, requantized as the Rh GEMM of 5.1)
//   unit_reset_candidate:  g_pre = Wx_g + Rh_g + bx_g + br_g;
//   unit_finish:           g = tanh(g_pre) and h', exactly the reset-after cell's
//                          (gru/int/unit_update.h).
// A domain D is one of unit_update.h's, plus, for the two ratios only this cell has:
//   V scale(ResetBeforeScale s, V v), V product(ResetBeforeScale s, V a, V b)
// UnitBias::G is the bias of g_pre; for this cell it holds bx_g and br_g (spec 5.4).
#pragma once

#include "fixq/host_device.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {

// The fixed-point ratios of the reset-before cell that the reset-after one lacks
// (docs/spec.md 5.4): r * h -> h (σ = S_r_out) and Rh -> g_pre.
enum class ResetBeforeScale { ResetMul, RhToG };
inline constexpr int kResetBeforeScales = 2;

// The first part's inputs: the unit's Wx and Rh of the z and r gates and its old state h.
template <class D>
struct ResetGateInputs {
  typename D::V wx_z, wx_r, rh_z, rh_r, h;
};

// z, and r * h quantized in h's parameters (scale, zero point, range): since 0 <= r <= 1,
// r * h lies between 0 and h, inside h's range, which holds 0.
template <class D>
struct ResetGates {
  typename D::V z, reset_h;
};

template <class D>
FIXQ_HOST_DEVICE ResetGates<D> unit_reset_gates(D& d, const ResetGateInputs<D>& in) {
  using O = Operand;
  // z and r: the reset-after cell's terms.
  const auto [z, r] = unit_update_reset_gates(d, in.wx_z, in.wx_r, in.rh_z, in.rh_r);
  // r * h in h's parameters: one product rounded half up, then saturated (a no-op for an
  // exact product, kept so that no domain relies on the argument above).
  const auto reset_h = d.sat(O::H, d.plus_zp(O::H, d.product(ResetBeforeScale::ResetMul, d.less_zp(O::ROut, r),
                                                            d.less_zp(O::H, in.h))));
  return {z, reset_h};
}

// g_pre from the unit's Wx_g and Rh_g = R_g (r * h), the latter in Rh's parameters.
template <class D>
FIXQ_HOST_DEVICE typename D::V unit_reset_candidate(D& d, typename D::V wx_g, typename D::V rh_g) {
  using O = Operand;
  return d.sat(O::GPre, d.add(d.add(d.scale(UnitScale::WxToG, d.less_zp(O::Wx, wx_g)),
                                    d.scale(ResetBeforeScale::RhToG, d.less_zp(O::Rh, rh_g))),
                              d.bias(UnitBias::G)));
}

}  // namespace fixq::gru_detail
