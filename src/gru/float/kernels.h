// Private: the float GRU's kernels, one table per instruction-set family.
//
// Each has one numeric definition that every family reproduces bit for bit (the scalar
// table is that definition, gru/float/kernels_scalar.cpp):
//
// * matmul: out[i, j] = dot_fma_chains(w row j, a row i), the fixed-order float dot product
//       dot_fma_chains(w, x, K): the k of each block [32b, min(K, 32b + 32)) in increasing
//       order through one chain of fused multiply-adds c_b = fma(w[k], x[k], c_b) from
//       c_b = +0 (one rounding per product and sum); then the chains left to right,
//       s = c_0, s = s + c_1, ... (+0 when K = 0).
//   A chain is what a register accumulator of one output holds while the weights stream
//   past, so a kernel keeps a tile of outputs in registers and broadcasts a's values; no
//   horizontal reduction. The blocks of 32 bound how far a chain carries its rounding errors
//   (a chain of 1024 has four times the error of the old 16 interleaved sums on random data;
//   chains of 32 have about as much). The order, not the instruction set, decides every
//   rounding, so the sums are the same on every CPU. w is read in the packed layout below.
// * pack: the weights [n, k] row-major (as GruCell holds them) in that layout.
// * gates: the unit update of every hidden unit of every row, unit_update() of
//   gru/float/math.h, elementwise.
#pragma once

#include <cstdint>
#include <string>

#include "cpu/registry.h"

namespace fixq::gru_float {

// The length of a chain of fused multiply-adds in a dot product (above).
inline constexpr int64_t kFmaChain = 32;

// The weight layout the matmuls read: w [n, k] in panels of kPanel rows. Panel p holds, for
// k = 0 .. K - 1 in order, the kPanel values w[kPanel p + c][k] (c < kPanel; +0 past row n),
// so one k of a panel is 256 contiguous bytes (four cache lines, four AVX-512 vectors of
// outputs) and a panel one sequential stream. packed_size(n, k) floats, 64-byte aligned.
inline constexpr int64_t kPanel = 64;
inline int64_t packed_size(int64_t n, int64_t k) { return (n + kPanel - 1) / kPanel * kPanel * k; }

// The values of a step's gate stage for `rows` rows of H units: wx, rh [rows, 3H] (gates
// z, r, g), biases bx, br [3H], h [rows, H] holding h_{t-1} and overwritten with h_t.
// When `all` is set, every intermediate operator is written too, [rows, H] each, in the
// order of UnitValues (z_pre, z, r_pre, r, rh_add_br, r_rh, g_pre, g, old_contrib,
// new_contrib; h is `h`).
struct GateArgs {
  int64_t rows = 0, H = 0;
  const float* wx = nullptr;
  const float* rh = nullptr;
  const float* bx = nullptr;
  const float* br = nullptr;
  float* h = nullptr;
  float* const* all = nullptr;  // null, or 10 arrays
};
inline constexpr int kGateIntermediates = 10;

// f(wx, rh, h, b) for each row b of a gate stage: its Wx and Rh rows [3H] and its state [H].
template <class F>
void for_each_gate_row(const GateArgs& g, F f) {
  for (int64_t b = 0; b < g.rows; ++b) f(g.wx + b * 3 * g.H, g.rh + b * 3 * g.H, g.h + b * g.H, b);
}

// f(op, value) for each intermediate of unit_update's values u (gru/float/math.h), op in
// GateArgs::all's order.
template <class U, class F>
void each_gate_intermediate(const U& u, F f) {
  int op = 0;
  for (const auto* v : {&u.z_pre, &u.z, &u.r_pre, &u.r, &u.rh_add_br, &u.r_rh, &u.g_pre, &u.g, &u.old_contrib, &u.new_contrib})
    f(op++, *v);
}
// out[i * ldo + j] = dot_fma_chains(w row j, a + i * lda, k) for i < m, j < n; w in the
// packed layout (packed_size(n, k) floats). With reverse_columns the kernel reads the
// weights' panels last to first: the same results (each output is its own dot product), and
// a caller multiplying by the same weights step after step alternates it, so that each step
// starts on the weights the last one read last, still in L2 (gru_forward alternates where R
// outgrows half of it).
using MatmulFn = void (*)(const float* a, int64_t lda, int64_t m, const float* packed, int64_t n, int64_t k,
                          float* out, int64_t ldo, bool reverse_columns);
// packed (packed_size(n, k) floats) = w [n, k] row-major in the packed layout.
using PackFn = void (*)(const float* w, int64_t n, int64_t k, float* packed);
using GatesFn = void (*)(const GateArgs& args);

struct FloatKernels {
  const char* name;
  MatmulFn matmul;
  PackFn pack;
  GatesFn gates;
};

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(FloatKernels, kFloat)

// The tables of the families that bring kernels (gru/float/registry.cpp).
cpu_detail::KernelRegistry<FloatKernels>& registry();

// The kernels the active features select (each operation its own best family: they share
// one packed layout).
struct ActiveKernels {
  MatmulFn matmul;
  PackFn pack;
  GatesFn gates;
};
ActiveKernels active_kernels();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (gru/float/registry.cpp).
std::vector<KernelChoice> report_kernels();


// The scalar definition of one dot product, for tests and tails.
float dot_fma_chains(const float* w, const float* x, int64_t k);

}  // namespace fixq::gru_float
