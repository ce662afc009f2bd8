// Private: the vectorised integer time loop of one GRU cell (the fast path).
//
// It computes exactly the integers of the reference loop (q_step_intonly.cpp), eight hidden
// units per AVX2 vector in int32 lanes. int32 lanes are exact only when every intermediate
// provably fits, so build_fast_plan() derives, once per cell, the interval of every
// intermediate from the operators' integer ranges and the fixed-point scales, and returns
// nothing when one interval leaves int32; run_cell then uses the reference for that cell.
// Two rewrites keep the lanes exact without changing any result:
//   * requantizing a GEMM accumulator, y = sat(R(v) + zp), depends on v only inside the
//     window [lo, hi] where y is not yet saturated (R is monotone), so v is first clamped
//     to that window, which fits int32 even when v itself is an int64 accumulator;
//   * a product that may leave int32 is formed in 64 bits and rounded there (power-of-two
//     plans) or split into high and low parts times the multiplier (multiplier plans).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gru/q_plan.h"

namespace fixq::gru_detail {

// A FixedPointScale as lanes evaluate it: y = round_half_up(x * m * 2^left / 2^right).
// Power-of-two plans have m == 1; multiplier plans have left == 0 and right in [1, 62]
// (a scale whose shift exceeds 62 contributes 0 for every int32 input, stored as m == 0).
struct LaneScale {
  int32_t m = 1;
  int32_t left = 0;
  int32_t right = 0;
  // Power-of-two right shifts (<= 30) whose inputs leave room for the rounding constant:
  // (x + 2^(right-1)) >> right then cannot overflow int32 and takes two lane operations.
  bool add_then_shift = false;
};

// Requantization of one GEMM output row n to an operator: sat(R_n(clamp(acc - comp_n)) + zp).
struct RequantRows {
  bool pow2 = true;
  std::vector<int64_t> comp;     // zp_a * colsum[n]
  std::vector<int32_t> lo, hi;   // the window where the output is not saturated yet
  std::vector<int32_t> m, left, right;
  int32_t zp = 0;
  IntRange out;
};

struct FastPlan {
  bool pow2 = true;      // every scale a pure shift
  bool acc64_x = false;  // the GEMM accumulators need int64 (16-bit activations)
  bool acc64_h = false;
  int64_t hp = 0;        // hidden size rounded up to whole vectors of 8 lanes
  RequantRows wx, rh;    // [3H + 8] rows (the last 8 are benign padding)
  // The per-tensor scales of the unit update, in the order of q_step_intonly.cpp.
  LaneScale wx_to_z, rh_to_z, wx_to_r, rh_to_r, rh_to_rhab, wx_to_g, rrh_to_g, rrh_mul, old_mul, new_mul, old_to_h,
      new_to_h;
  // Products whose value can leave int32: computed in 64-bit lanes (apply_wide_*).
  bool wide_rrh = false, wide_old = false, wide_new = false;
  // Per unit [hp]: bias plus the target's zero point.
  std::vector<int32_t> c_z, c_r, c_rhab, c_g;
};

// The fast plan of a cell, or nothing when an intermediate could leave int32 lanes.
std::optional<FastPlan> build_fast_plan(const CellPlan& plan);

// Same contract as run_cell (q_plan.h), computed with the AVX2 kernels.
void run_cell_fast(const CellPlan& plan, const FastPlan& fast, const void* q_x, int64_t steps, int64_t batch,
                   const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y);

// The name of the kernels run_cell uses for cells with a fast plan.
std::string fast_kernel_name();

// The AVX2 kernels (q_fast_avx2.cpp).
namespace avx2 {
// out[g * hp + j] = requantized acc[g * H + j] for the three gates g and j < hp (rows past
// 3H read the padding of acc and rows, whose results are ignored).
void requant_rows_s32(const RequantRows& r, int64_t H, int64_t hp, const int32_t* acc, int32_t* out);
void requant_rows_s64(const RequantRows& r, int64_t H, int64_t hp, const int64_t* acc, int32_t* out);
// State rows between their storage (int8 / int16) and int32 lanes; narrow expects values
// inside the storage type (they are saturated to h's range).
void widen(const void* q, IntType t, int64_t n, int32_t* out);
void narrow(const int32_t* v, int64_t n, IntType t, void* out);
// The unit update of q_step_intonly.cpp for units [0, hp): wx, rh [3 * hp], h [hp] -> h_new [hp].
void update_units(const CellPlan& plan, const FastPlan& fast, const int32_t* wx, const int32_t* rh, const int32_t* h,
                  int32_t* h_new);
}  // namespace avx2

}  // namespace fixq::gru_detail
