// An independent oracle of the integer GRU, written from docs/spec.md alone: the whole
// network (layers, the layer-to-layer rescale, both directions, ragged lengths, h0) in
// exact int128 arithmetic, without CellPlan, the library's step code or its rescale
// helpers. It takes from the library only the quantization parameters it is given and the
// activation tables (ActivationLut, spec 4.4, tested on its own in q_lut tests).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fixq/gru.h"
#include "fixq/qgru.h"

namespace fixq::gru_oracle {

// A(ρ, x) of spec 2.3 with ρ = make_scale(σ, mode) built from frexp as the spec states:
// the pair (m, shift) meaning m * 2^-shift.
struct Ratio {
  int64_t m = 1;
  int shift = 0;
};
Ratio ratio(double sigma, ScaleKind kind);
int64_t apply(const Ratio& r, int64_t x);  // exact product, one rounding half up, saturated to int64

// Spec 3.1: q = Z + RNE_SAT(fl32(x / S), qmin - Z, qmax - Z).
int32_t quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);

// The integer forward pass of spec 6, of the model's cell (5.2 reset-after, 5.4 reset-before) (x [T, B, C] time-major, lengths empty or B entries,
// h0 null or [L*D, B, H]), dequantized as 6.5 says: y [T, B, D*H] with padding 0.0, h_n
// [L*D, B, H].
GruOutput forward(const GruModel& model, const GruQuantParams& params, const float* x, int64_t T, int64_t B,
                  std::span<const int64_t> lengths = {}, const float* h0 = nullptr);

}  // namespace fixq::gru_oracle
