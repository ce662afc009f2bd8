// Private: the vectorised integer time loop of one GRU cell (the fast path).
//
// It computes exactly the integers of the reference loop (q_step_intonly.cpp), many hidden
// units per vector in int32 lanes: 8 per AVX2 register, 16 per AVX-512 register. int32
// lanes are exact only when every intermediate provably fits, so build_fast_plan()
// evaluates the unit update (q_unit_update.h) on intervals, once per cell, and returns
// nothing when one interval leaves int32; run_cell then uses the reference for that cell.
// Two rewrites keep the lanes exact without changing any result:
//   * requantizing a GEMM accumulator, y = sat(R(v) + zp), depends on v only inside the
//     window [lo, hi] where y is not yet saturated (R is monotone), so v is first clamped
//     to that window, which fits int32 even when v itself is an int64 accumulator;
//   * a product that may leave int32 is formed in 64 bits and rounded there (power-of-two
//     plans) or split into high and low parts times the multiplier (multiplier plans),
//     arith/lane_scale.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arith/lane_scale.h"
#include "cpu/registry.h"
#include "gru/q_plan.h"

namespace fixq::gru_detail {

// Hidden units are padded to whole vectors of the widest family (AVX-512: 16 int32).
inline constexpr int64_t kLanePadding = 16;

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
  int64_t hp = 0;        // hidden size rounded up to kLanePadding
  RequantRows wx, rh;    // [3H + kLanePadding] rows (the last ones benign padding)
  // The lane form of each ratio of the unit update, and whether its product is wide.
  std::array<LaneScale, kUnitScales> lane{};
  std::array<bool, kUnitScales> wide{};
  // Per unit [hp]: each bias plus its target's zero point ([UnitBias]).
  std::array<std::vector<int32_t>, 4> bias;
};

// The fast plan of a cell, or nothing when an intermediate could leave int32 lanes.
std::optional<FastPlan> build_fast_plan(const CellPlan& plan);

// One instruction-set family's lane kernels (q_fast_<family>.cpp).
struct GruLaneKernels {
  const char* name;
  int lanes;  // int32 per vector
  // out[g * hp + j] = requantized acc[g * H + j] for the three gates g and j < hp (rows past
  // 3H read the padding of acc and rows, whose results are ignored).
  void (*requant_rows_s32)(const RequantRows& r, int64_t H, int64_t hp, const int32_t* acc, int32_t* out);
  void (*requant_rows_s64)(const RequantRows& r, int64_t H, int64_t hp, const int64_t* acc, int32_t* out);
  // State rows between their storage (int8 / int16) and int32 lanes; narrow expects values
  // inside the storage type (they are saturated to h's range).
  void (*widen)(const void* q, IntType t, int64_t n, int32_t* out);
  void (*narrow)(const int32_t* v, int64_t n, IntType t, void* out);
  // The unit update for units [0, hp): wx, rh [3 * hp], h [hp] -> h_new [hp].
  void (*update_units)(const CellPlan& plan, const FastPlan& fast, const int32_t* wx, const int32_t* rh,
                       const int32_t* h, int32_t* h_new);
};

// A family's table: its lane kernels, or null to inherit the next family's. The scalar
// family has none: the reference loop is its path.
struct GruKernels {
  const GruLaneKernels* lanes;
};

namespace avx2 { extern const GruKernels kGru; }
namespace avx512 { extern const GruKernels kGru; }
namespace avx512_emulated { extern const GruKernels kGru; }

// Best first, one entry per family (q_run.cpp).
cpu_detail::KernelRegistry<GruKernels>& registry();

// The lane kernels the active features select, or null: the reference loop.
const GruLaneKernels* active_lane_kernels();
// Their name, or the reference loop's.
std::string fast_kernel_name();

// Same contract as run_cell (q_plan.h), computed with the given lane kernels.
void run_cell_fast(const GruLaneKernels& k, const CellPlan& plan, const FastPlan& fast, const void* q_x, int64_t steps,
                   int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y);

}  // namespace fixq::gru_detail
