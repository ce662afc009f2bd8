// Private: the float GRU's two kernels, one table per instruction-set family.
//
// Both have one numeric definition that every family reproduces bit for bit (the scalar
// table is that definition, gru/float/kernels_scalar.cpp):
//
// * matmul_nt: out[i, j] = dot16(a row i, w row j), the fixed-order float dot product
//       dot16(w, x, K): 16 partial sums p_0 .. p_15, p_l = fl(p_l + fl(w[k] x[k])) over
//       k = l, l + 16, l + 32, ... < K in increasing k, each p_l starting at +0; then
//       combined pairwise p_l += p_{l+8} (l < 8), p_l += p_{l+4} (l < 4),
//       p_l += p_{l+2} (l < 2), and the result p_0 + p_1.
//   Sixteen partials are one AVX-512 register, two AVX2 ones, and sixteen independent
//   addition chains; the tree is the one a register reduction does. The order, not the
//   instruction set, decides every rounding, so the sums are the same on every CPU.
// * gates: the unit update of every hidden unit of every row, unit_update() of
//   gru/float/math.h, elementwise.
#pragma once

#include <cstdint>
#include <string>

#include "cpu/registry.h"

namespace fixq::gru_float {

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
using MatmulNtFn = void (*)(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k,
                            float* out, int64_t ldo);
using GatesFn = void (*)(const GateArgs& args);

struct FloatKernels {
  const char* name;
  // out[i * ldo + j] = dot16(a + i * lda, w + j * k, k) for i < m, j < n (w is [n, k]).
  MatmulNtFn matmul_nt;
  GatesFn gates;
};

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(FloatKernels, kFloat)

// The tables of the families that bring kernels (gru/float/registry.cpp).
cpu_detail::KernelRegistry<FloatKernels>& registry();

// The kernels the active features select (each operation its own best family).
struct ActiveKernels {
  MatmulNtFn matmul_nt;
  GatesFn gates;
};
ActiveKernels active_kernels();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (gru/float/registry.cpp).
std::vector<KernelChoice> report_kernels();


// The scalar definition of one dot product, for tests and tails.
float dot16(const float* w, const float* x, int64_t k);

}  // namespace fixq::gru_float
