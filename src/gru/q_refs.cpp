// CellRefs: the plan's fields indexed by the unit update's names (q_unit_update.h).
#include "gru/q_plan.h"

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

}  // namespace fixq::gru_detail
