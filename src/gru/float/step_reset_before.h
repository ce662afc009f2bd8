// Private: one time step of one float reset-before GRU cell (fixq/gru.h GruCellKind), shared
// by gru_forward and GruStream so that both compute the same bits.
//
//   z = sigmoid(((Wx_z + Rh_z) + bx_z) + br_z),  r likewise       (Rh = R_zr h)
//   Rh_g = R_g (r * h)                                             (a second product per step)
//   g = tanh(((Wx_g + Rh_g) + bx_g) + br_g)
//   h' = fma(z, h, (1 - z) * g)
// each operation rounded on its own in float32, sums left to right, as the reset-after
// step's z_pre (gru/float/math.h); the products are the kernels' dot_fma_chains, so every
// CPU gives the same bits. The gate stage is scalar on every CPU: the reset-before cell has
// no vector gate kernels yet (the products, the cost, are vectorised).
#pragma once

#include <cstdint>

#include "fixq/gru.h"
#include "gru/float/kernels.h"
#include "gru/float/step.h"

namespace fixq::gru_float {

// recurrent_step's contract for a reset-before cell: reads x [rows, C] (only for the tap),
// wx [rows, 3H] and h [rows, H], overwrites h with h_t, and reports the operators the cell
// has (fixq/gru.h: no Rh_add_br, no rRh) to site.tap: x, Wx, z_pre, z_out, r_pre, r_out,
// Rh (rows [0, 2H) R h, rows [2H, 3H) R_g (r * h)), g_pre, g_out, old_contrib, new_contrib, h.
void reset_before_step(const GruCell& cell, const float* r, const ActiveKernels& k, int64_t rows, const float* x,
                       const float* wx, float* h, StepScratch& s, const TapSite& site, bool reverse_columns = false);

}  // namespace fixq::gru_float
