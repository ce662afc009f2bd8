// One float GRU step over all rows: the recurrent product, then the unit update of
// gru/float/math.h, through the active kernels (gru/float/kernels.h). With a tap, every operator
// is kept as a whole array so that the tap sees each at once; without one, only h.
#include "gru/float/step.h"

namespace fixq::gru_float {

void input_projection(const GruCell& cell, const float* w, const ActiveKernels& k, int64_t rows, const float* x,
                      float* wx, bool reverse_columns) {
  const int64_t C = cell.input_size, H3 = 3 * cell.hidden_size;
  k.matmul(x, C, rows, w, H3, C, wx, H3, reverse_columns);
}

void recurrent_step(const GruCell& cell, const float* r, const ActiveKernels& k, int64_t rows, const float* x,
                    const float* wx, float* h, StepScratch& s, const TapSite& site, bool reverse_columns) {
  recurrent_product(cell, r, k, rows, h, s, reverse_columns);
  recurrent_gates(cell, k, rows, x, wx, h, s, site);
}

void recurrent_product(const GruCell& cell, const float* r, const ActiveKernels& k, int64_t rows, const float* h,
                       StepScratch& s, bool reverse_columns) {
  const int64_t H = cell.hidden_size, H3 = 3 * H;
  s.rh.resize(static_cast<std::size_t>(rows * H3));
  k.matmul(h, H, rows, r, H3, H, s.rh.data(), H3, reverse_columns);
}

void recurrent_gates(const GruCell& cell, const ActiveKernels& k, int64_t rows, const float* x, const float* wx, float* h,
                     StepScratch& s, const TapSite& site) {
  const int64_t C = cell.input_size, H = cell.hidden_size, H3 = 3 * H;
  const bool tapped = site.active();
  const auto report = [&](GruOp op, const float* values, int64_t width) {
    site.tap->on_value(site.layer, site.direction, site.t, op, values, Shape{rows, width});
  };
  if (tapped) {
    report(GruOp::X, x, C);
    report(GruOp::Wx, wx, H3);
    report(GruOp::Rh, s.rh.data(), H3);
  }

  float* all[kGateIntermediates];
  for (int i = 0; i < kGateIntermediates; ++i) {
    if (tapped) s.all[static_cast<std::size_t>(i)].resize(static_cast<std::size_t>(rows * H));
    all[i] = s.all[static_cast<std::size_t>(i)].data();
  }
  // old_contrib reads h_{t-1}: with a tap it is reported before h is, from its own array.
  k.gates({rows, H, wx, s.rh.data(), cell.bx.data(), cell.br.data(), h, tapped ? all : nullptr});
  if (!tapped) return;
  // The order of fixq/gru.h; `all` is in UnitValues order.
  constexpr struct {
    GruOp op;
    int index;
  } kOrder[] = {{GruOp::ZPre, 0}, {GruOp::ZOut, 1}, {GruOp::RPre, 2},       {GruOp::ROut, 3},
                {GruOp::RhAddBr, 4}, {GruOp::RRh, 5}, {GruOp::GPre, 6},     {GruOp::GOut, 7},
                {GruOp::OldContrib, 8}, {GruOp::NewContrib, 9}};
  for (const auto& o : kOrder) report(o.op, all[o.index], H);
  report(GruOp::H, h, H);
}

}  // namespace fixq::gru_float
