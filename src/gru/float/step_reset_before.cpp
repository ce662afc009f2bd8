// The float reset-before step (gru/float/step_reset_before.h).
#include "gru/float/step_reset_before.h"

#include <vector>

#include "gru/float/math.h"

namespace fixq::gru_float {

namespace {

// The values of the second half of the step, kept for the tap: the reset state r * h and
// the product of R with it.
thread_local std::vector<float> reset_state_of_thread, reset_product_of_thread;

}  // namespace

void reset_before_step(const GruCell& cell, const float* r, const ActiveKernels& k, int64_t rows, const float* x,
                       const float* wx, float* h, StepScratch& s, const TapSite& site, bool reverse_columns) {
  const ScalarOps o;
  const int64_t C = cell.input_size, H = cell.hidden_size, H3 = 3 * H;
  const auto n = static_cast<std::size_t>(rows * H);
  // R h for all 3H rows: the g rows are replaced below by R_g (r * h). The packed layout
  // holds R in panels of 64 rows, so R_g alone is not a view of it; the wasted third of
  // this product keeps one packed R for both cells.
  s.rh.resize(static_cast<std::size_t>(rows * H3));
  k.matmul(h, H, rows, r, H3, H, s.rh.data(), H3, reverse_columns);
  for (std::size_t i = 0; i < s.all.size(); ++i) s.all[i].resize(n);
  // s.all in GateArgs' order: z_pre, z, r_pre, r, (rh_add_br, r_rh unused), g_pre, g, old, new.
  auto& z_pre = s.all[0], &z = s.all[1], &r_pre = s.all[2], &rg = s.all[3];
  auto& g_pre = s.all[6], &g = s.all[7], &old_c = s.all[8], &new_c = s.all[9];
  std::vector<float>& reset = reset_state_of_thread;
  std::vector<float>& product = reset_product_of_thread;
  reset.resize(n);
  product.resize(static_cast<std::size_t>(rows * H3));
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t j = 0; j < H; ++j) {
      const int64_t u = b * H + j;
      const float* wxb = wx + b * H3;
      const float* rhb = s.rh.data() + b * H3;
      z_pre[u] = o.add(o.add(o.add(wxb[j], rhb[j]), cell.bx[j]), cell.br[j]);
      z[u] = sigmoid_f32(o, z_pre[u]);
      r_pre[u] = o.add(o.add(o.add(wxb[H + j], rhb[H + j]), cell.bx[H + j]), cell.br[H + j]);
      rg[u] = sigmoid_f32(o, r_pre[u]);
      reset[u] = o.mul(rg[u], h[u]);  // r * h: the reset gate meets the state before R
    }
  k.matmul(reset.data(), H, rows, r, H3, H, product.data(), H3, reverse_columns);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t j = 0; j < H; ++j) {
      const int64_t u = b * H + j;
      float* rhb = s.rh.data() + b * H3;
      rhb[2 * H + j] = product[static_cast<std::size_t>(b * H3 + 2 * H + j)];
      g_pre[u] = o.add(o.add(o.add(wx[b * H3 + 2 * H + j], rhb[2 * H + j]), cell.bx[2 * H + j]), cell.br[2 * H + j]);
      g[u] = tanh_f32(o, g_pre[u]);
      old_c[u] = o.mul(z[u], h[u]);
      new_c[u] = o.mul(o.sub(o.splat(1.0f), z[u]), g[u]);
    }
  // h is read above (reset, old_c) before it is overwritten here.
  for (std::size_t u = 0; u < n; ++u) h[u] = o.fma(z[u], h[u], new_c[u]);
  if (!site.active()) return;
  const auto report = [&](GruOp op, const float* values, int64_t width) {
    site.tap->on_value(site.layer, site.direction, site.t, op, values, Shape{rows, width});
  };
  report(GruOp::X, x, C);
  report(GruOp::Wx, wx, H3);
  report(GruOp::ZPre, z_pre.data(), H);
  report(GruOp::ZOut, z.data(), H);
  report(GruOp::RPre, r_pre.data(), H);
  report(GruOp::ROut, rg.data(), H);
  report(GruOp::Rh, s.rh.data(), H3);
  report(GruOp::GPre, g_pre.data(), H);
  report(GruOp::GOut, g.data(), H);
  report(GruOp::OldContrib, old_c.data(), H);
  report(GruOp::NewContrib, new_c.data(), H);
  report(GruOp::H, h, H);
}

}  // namespace fixq::gru_float
