// Private: the scale searches of ggml's K-quant reference quantizers, each reproducing
// ggml's function of the same purpose operation for operation (float32, ggml's order of
// evaluation, no contraction), so that the chosen scales and quants are ggml's bits.
// Only the parameterisations the reference quantizers use are provided.
#pragma once

#include <cstdint>

namespace fixq::gguf::detail {

// ggml's make_qx_quants with rmse_type 1 and no importance weights (used by Q6_K):
// weighted (w = x^2) least-squares scale for symmetric quants in [-nmax, nmax - 1], trying
// 19 candidate inverse scales -(nmax + 0.1 * is) / max. Writes L[i] = q + nmax (0 when the
// group's |x| max is below 1e-15, which returns 0) and returns the scale.
float make_qx_quants_rmse1(int n, int nmax, const float* x, int8_t* L);

// ggml's make_q3_quants with do_rmse (used by Q3_K): starts from round(-nmax / max * x),
// then up to 5 rounds of coordinate descent on the x^2-weighted error. Writes L[i] = q +
// nmax (0 for an all-tiny group, which returns 0) and returns the scale.
float make_q3_quants_rmse(int n, int nmax, const float* x, int8_t* L);

// ggml's make_qkx2_quants (used by Q2_K, Q4_K, Q5_K): asymmetric quants in [0, nmax] with a
// non-positive min, searching nstep + 1 inverse scales (rmin + rdelta * is + nmax) / (max -
// min) by weighted least squares, keeping the one of least weighted |error| (use_mad) or
// error^2. Writes L, *neg_min = -min (>= 0) and returns the scale.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* neg_min,
                       float rmin, float rdelta, int nstep, bool use_mad);

}  // namespace fixq::gguf::detail
