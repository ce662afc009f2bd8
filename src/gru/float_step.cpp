// One float GRU step, operator by operator over all rows, in Haste's formulas (see
// fixq/gru.h): each operator is a whole array before the next starts, which is what lets
// the tap see every operator's values at once.
#include "gru/float_step.h"

#include <cmath>

namespace fixq::gru_float {
namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// out[b, j] = sum_k M[j, k] * in[b, k], summed in order k = 0, 1, ...
void matmul_rows(const float* M, int64_t out_n, int64_t in_n, int64_t rows, const float* in, float* out) {
  for (int64_t b = 0; b < rows; ++b) {
    const float* v = in + b * in_n;
    for (int64_t j = 0; j < out_n; ++j) {
      const float* m = M + j * in_n;
      float acc = 0.0f;
      for (int64_t k = 0; k < in_n; ++k) acc += m[k] * v[k];
      out[b * out_n + j] = acc;
    }
  }
}

}  // namespace

void cell_step(const GruCell& cell, int64_t rows, const float* x, float* h, StepScratch& s,
               const TapSite& site) {
  const int64_t C = cell.input_size, H = cell.hidden_size, n = rows * H;
  for (auto* v : {&s.wx, &s.rh}) v->resize(static_cast<std::size_t>(3 * n));
  for (auto* v : {&s.z_pre, &s.z, &s.r_pre, &s.r, &s.rh_add_br, &s.r_rh, &s.g_pre, &s.g,
                  &s.old_contrib, &s.new_contrib})
    v->resize(static_cast<std::size_t>(n));
  float *wx = s.wx.data(), *rh = s.rh.data(), *z_pre = s.z_pre.data(), *z = s.z.data(),
        *r_pre = s.r_pre.data(), *r = s.r.data(), *rh_add_br = s.rh_add_br.data(),
        *r_rh = s.r_rh.data(), *g_pre = s.g_pre.data(), *g = s.g.data(),
        *old_contrib = s.old_contrib.data(), *new_contrib = s.new_contrib.data();
  // Gate blocks: z at [0, H), r at [H, 2H), g at [2H, 3H) of bx, br and each row of Wx, Rh.
  const float *bx = cell.bx.data(), *br = cell.br.data();
  const auto report = [&](GruOp op, const float* values, int64_t width) {
    if (site.tap && site.tap->on_value)
      site.tap->on_value(site.layer, site.direction, site.t, op, values, Shape{rows, width});
  };

  report(GruOp::X, x, C);
  matmul_rows(cell.W.data(), 3 * H, C, rows, x, wx);
  report(GruOp::Wx, wx, 3 * H);
  matmul_rows(cell.R.data(), 3 * H, H, rows, h, rh);
  report(GruOp::Rh, rh, 3 * H);

  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = 0; i < H; ++i) z_pre[b * H + i] = wx[b * 3 * H + i] + rh[b * 3 * H + i] + bx[i] + br[i];
  report(GruOp::ZPre, z_pre, H);
  for (int64_t e = 0; e < n; ++e) z[e] = sigmoid(z_pre[e]);
  report(GruOp::ZOut, z, H);

  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = H; i < 2 * H; ++i)
      r_pre[b * H + i - H] = wx[b * 3 * H + i] + rh[b * 3 * H + i] + bx[i] + br[i];
  report(GruOp::RPre, r_pre, H);
  for (int64_t e = 0; e < n; ++e) r[e] = sigmoid(r_pre[e]);
  report(GruOp::ROut, r, H);

  // The reset gate scales only the recurrent part of the candidate (Haste, cuDNN, torch).
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = 2 * H; i < 3 * H; ++i) rh_add_br[b * H + i - 2 * H] = rh[b * 3 * H + i] + br[i];
  report(GruOp::RhAddBr, rh_add_br, H);
  for (int64_t e = 0; e < n; ++e) r_rh[e] = r[e] * rh_add_br[e];
  report(GruOp::RRh, r_rh, H);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = 2 * H; i < 3 * H; ++i)
      g_pre[b * H + i - 2 * H] = wx[b * 3 * H + i] + r_rh[b * H + i - 2 * H] + bx[i];
  report(GruOp::GPre, g_pre, H);
  for (int64_t e = 0; e < n; ++e) g[e] = std::tanh(g_pre[e]);
  report(GruOp::GOut, g, H);

  for (int64_t e = 0; e < n; ++e) old_contrib[e] = z[e] * h[e];
  report(GruOp::OldContrib, old_contrib, H);
  for (int64_t e = 0; e < n; ++e) new_contrib[e] = (1.0f - z[e]) * g[e];
  report(GruOp::NewContrib, new_contrib, H);
  for (int64_t e = 0; e < n; ++e) h[e] = old_contrib[e] + new_contrib[e];
  report(GruOp::H, h, H);
}

}  // namespace fixq::gru_float
