// Private: one time step of one float GRU cell, shared by gru_forward and GruStream so
// that both compute the same bits.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fixq/gru.h"
#include "gru/float/kernels.h"

namespace fixq::gru_float {

// Where a step's operator values go: the tap (may be null) and the coordinates it is told.
struct TapSite {
  const GruTap* tap = nullptr;
  int layer = 0;
  int direction = 0;
  int64_t t = 0;
  bool active() const { return tap != nullptr && static_cast<bool>(tap->on_value); }
};

// The intermediate values of one step, kept between steps to reuse their memory.
struct StepScratch {
  std::vector<float> rh;                                  // [rows, 3H]
  std::array<std::vector<float>, kGateIntermediates> all;  // [rows, H] each, only with a tap
};

// Wx = W x for `rows` rows of x (row stride C): wx [rows, 3H]. w: cell.W packed
// (gru/float/weights.h). reverse_columns: W's panels last to first (MatmulFn).
void input_projection(const GruCell& cell, const float* w, const ActiveKernels& k, int64_t rows, const float* x,
                      float* wx, bool reverse_columns = false);

// Advances `rows` independent rows by one step of `cell`: reads their input x [rows, C]
// (only for the tap), its projection wx [rows, 3H] and h [rows, H] (h_{t-1}), then
// overwrites h with h_t. Reports every operator to site.tap in the order fixq/gru.h lists.
// r: cell.R packed. The caller has validated the cell and the values. reverse_columns: R's
// panels last to first (MatmulFn), which a time loop alternates from step to step.
void recurrent_step(const GruCell& cell, const float* r, const ActiveKernels& k, int64_t rows, const float* x,
                    const float* wx, float* h, StepScratch& s, const TapSite& site, bool reverse_columns = false);

// recurrent_step in its two parts, for a caller that runs the input projection between
// them (GruStream, whose every other frame reads R and then W, both last to first):
// Rh = h R^T into s.rh, then the unit update from wx and s.rh.
void recurrent_product(const GruCell& cell, const float* r, const ActiveKernels& k, int64_t rows, const float* h,
                       StepScratch& s, bool reverse_columns);
void recurrent_gates(const GruCell& cell, const ActiveKernels& k, int64_t rows, const float* x, const float* wx, float* h,
                     StepScratch& s, const TapSite& site);

}  // namespace fixq::gru_float
