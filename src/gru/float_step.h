// Private: one time step of one float GRU cell, shared by gru_forward and GruStream so
// that both compute the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "fixq/gru.h"

namespace fixq::gru_float {

// Where a step's operator values go: the tap (may be null) and the coordinates it is told.
struct TapSite {
  const GruTap* tap = nullptr;
  int layer = 0;
  int direction = 0;
  int64_t t = 0;
};

// The intermediate values of one step, kept between steps to reuse their memory.
struct StepScratch {
  std::vector<float> wx, rh;                 // [rows, 3H]
  std::vector<float> z_pre, z, r_pre, r;     // [rows, H] each
  std::vector<float> rh_add_br, r_rh, g_pre, g, old_contrib, new_contrib;
};

// Advances `rows` independent rows by one step of `cell`: reads x [rows, C] and h [rows, H]
// (h_{t-1}), then overwrites h with h_t. Reports every operator to site.tap in the order
// fixq/gru.h lists. The caller has validated the cell and the values.
void cell_step(const GruCell& cell, int64_t rows, const float* x, float* h, StepScratch& s,
               const TapSite& site);

}  // namespace fixq::gru_float
