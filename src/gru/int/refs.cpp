// CellRefs: the plan's fields indexed by the unit update's names (gru/int/unit_update.h).
#include "gru/int/plan.h"

namespace fixq::gru_detail {

CellRefs::CellRefs(const CellPlan& p)
    : operand{&p.h, &p.wx, &p.rh, &p.z_pre, &p.r_pre, &p.g_pre, &p.z_out, &p.r_out, &p.g_out, &p.rh_add_br, &p.rrh,
              &p.old_c, &p.new_c},
      scale{&p.wx_to_z, &p.rh_to_z, &p.wx_to_r, &p.rh_to_r, &p.rh_to_rhab, &p.wx_to_g,
            &p.rrh_to_g, &p.rrh_mul, &p.old_mul, &p.new_mul, &p.old_to_h, &p.new_to_h},
      lut{&p.sig_z, &p.sig_r, &p.tanh_g},
      bias{&p.bias_z, &p.bias_r, &p.bias_rhab, &p.bias_g},
      bias_zp{p.z_pre.zp, p.r_pre.zp, p.rh_add_br.zp, p.g_pre.zp},
      q_one(p.q_one) {}

UnitConstants unit_constants(const CellRefs& c) {
  UnitConstants u{};
  for (int o = 0; o < kOperands; ++o) {
    u.zp[o] = c.operand[static_cast<size_t>(o)]->zp;
    u.range[o] = c.operand[static_cast<size_t>(o)]->range;
  }
  for (int s = 0; s < kUnitScales; ++s) u.ratio[s] = *c.scale[static_cast<size_t>(s)];
  for (int l = 0; l < kUnitLuts; ++l) u.lut[l] = lut_view(*c.lut[static_cast<size_t>(l)]);
  for (int b = 0; b < kUnitBiases; ++b) {
    u.bias[b] = c.bias[static_cast<size_t>(b)]->data();
    u.bias_zp[b] = c.bias_zp[static_cast<size_t>(b)];
  }
  u.q_one = c.q_one;
  return u;
}

}  // namespace fixq::gru_detail
