// QuantizedGru::cell_constants: the build-time constants of one cell, copied out of its plan.
#include "fixq/error.h"
#include "gru/int/model.h"

namespace fixq {

GruCellConstants QuantizedGru::cell_constants(size_t c) const {
  const Impl& m = *impl_;
  require(c < m.plans.size(), "GRU cell ", c, " out of range: the model has ", m.plans.size(), " cells");
  const gru_detail::CellPlan& p = m.plans[c];
  GruCellConstants k;
  k.q_w = p.q_w;
  k.q_r = p.q_r;
  k.q_bx = p.q_bx;
  k.q_br = p.q_br;
  k.wx_scale = p.wx_scale;
  k.rh_scale = p.rh_scale;
  k.wx_to_z = p.wx_to_z;
  k.rh_to_z = p.rh_to_z;
  k.wx_to_r = p.wx_to_r;
  k.rh_to_r = p.rh_to_r;
  k.rh_to_rhab = p.rh_to_rhab;
  k.wx_to_g = p.wx_to_g;
  k.rrh_to_g = p.rrh_to_g;
  k.rrh_mul = p.rrh_mul;
  k.old_mul = p.old_mul;
  k.new_mul = p.new_mul;
  k.old_to_h = p.old_to_h;
  k.new_to_h = p.new_to_h;
  k.bias_z = p.bias_z;
  k.bias_r = p.bias_r;
  k.bias_rhab = p.bias_rhab;
  k.bias_g = p.bias_g;
  k.q_one = p.q_one;
  k.sig_z = p.sig_z;
  k.sig_r = p.sig_r;
  k.tanh_g = p.tanh_g;
  k.cell_kind = p.kind;
  k.reset_mul = p.reset_mul;
  k.rh_to_g = p.rh_to_g;
  const int D = m.directions();
  const size_t layer = c / static_cast<size_t>(D);
  if (layer > 0) {
    // As run_layers rescales the layer below's outputs (gru/int/forward.cpp, spec 6.4).
    const QuantParams& nx = m.params.cells[layer * static_cast<size_t>(D)][GruOp::X];
    const ScaleKind kind = m.params.config.scale_kind;
    for (int d = 0; d < D; ++d) {
      const QuantParams& hp = m.params.cells[(layer - 1) * static_cast<size_t>(D) + static_cast<size_t>(d)][GruOp::H];
      k.x_from_below.push_back(
          Rescale::make(hp.scale[0], hp.zero_point[0], nx.scale[0], nx.zero_point[0], m.plans[c].x.range, kind).ratio);
    }
  }
  return k;
}

}  // namespace fixq
