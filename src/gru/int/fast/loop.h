// Private: the vectorised integer time loop of one GRU cell (the fast path).
//
// It computes exactly the integers of the reference loop (gru/int/step_intonly.cpp), many hidden
// units per vector in int32 lanes: 8 per AVX2 register, 16 per AVX-512 register. int32
// lanes are exact only when every intermediate provably fits, so build_fast_plan()
// evaluates the unit update (gru/int/unit_update.h) on intervals, once per cell, and returns
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
#include "cpu/aligned_vector.h"
#include "cpu/registry.h"
#include "gru/int/plan.h"

namespace fixq::gru_detail {

// Hidden units are padded to whole vectors of the widest family (AVX-512: 16 int32).
inline constexpr int64_t kLanePadding = 16;

// Per-row and per-unit constants the lanes load beside their data: 64-byte aligned.
using AlignedInts = cpu::AlignedVector<int32_t>;

// The fused requantization of int32 accumulators under a power-of-two plan where every
// row's scale is 2^-shift, shift in [0, 30]: for x = clamp(acc, lo_acc, hi_acc),
//   y = (x + add) >> shift,  add = 2^(shift-1) (0 for shift 0) - comp + zp * 2^shift,
//   lo_acc = lo + comp, hi_acc = hi + comp,
// which is sat(R(clamp(acc - comp, lo, hi)) + zp) exactly: the window moved by comp, and
// floor((v + 2^(shift-1)) / 2^shift) + zp = floor((v + 2^(shift-1) + zp * 2^shift) / 2^shift)
// with R's round-half-up. build_fast_plan keeps it only where x + add stays in int32 and
// both ends of the window land inside the output range (y is monotone, so every x does and
// the final clamp is the identity). Four loads and four operations per vector instead of
// nine and eleven. Row j of gate g sits at g * hp + j, so every vector load is aligned.
struct FusedRequant {
  AlignedInts lo_acc, hi_acc, add, shift;  // [3 * hp]
};

// Requantization of one GEMM output row n to an operator: sat(R_n(clamp(acc - comp_n)) + zp).
struct RequantRows {
  bool pow2 = true;
  cpu::AlignedVector<int64_t> comp;  // zp_a * colsum[n]
  AlignedInts comp32;                // the same where it fits int32 (int32 accumulators), else empty
  AlignedInts lo, hi;                // the window where the output is not saturated yet
  // The lane form of R_n (arith/lane_scale.h) with right_m1 = max(right - 1, 0) and
  // bit = min(right, 1) precomputed for the power-of-two lanes.
  AlignedInts m, left, right, right_m1, bit;
  int32_t zp = 0;
  IntRange out;
  std::optional<FusedRequant> fused;  // where it applies (above)
};

// The unit update on 32 int16 lanes (AVX512_VBMI), for int8 plans where every
// intermediate provably fits int16 (lanes16_form): half the vector operations of int32
// lanes. Each ratio is an add-then-shift or a left shift (FastPlan::shifts); a product
// p = a * b rounded at r bits is vpmulhrsw(a << pre_a, b << pre_b) with pre_a + pre_b =
// 15 - r, which is floor((p * 2^(15-r) + 2^14) / 2^15) = floor((p + 2^(r-1)) / 2^r): the
// same rounding, exactly, as long as both shifted operands and the result fit int16.
struct Lanes16Form {
  std::array<int, kUnitScales> pre_a{}, pre_b{};  // for the three products' ratios
  std::array<cpu::AlignedVector<int16_t>, 4> bias;  // FastPlan::bias as int16, [hp + 32]
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
  // Every ratio of the update a power of two in its add-then-shift form or a plain left
  // shift, no wide product: the lanes then evaluate each scale as one addition and one
  // shift (or one shift), without testing the other forms.
  bool shifts = false;
  // Per unit [hp]: each bias plus its target's zero point ([UnitBias]).
  std::array<AlignedInts, 4> bias;
  std::optional<Lanes16Form> lanes16;  // where it applies (above)
  // Per interpolated activation table ([UnitLut]) whose inputs span at most 2^16 values and
  // whose outputs fit int16 (the tables of 16-bit operators): every input's value, the
  // table read at q - input_min, so that a lane looks it up with one 32-bit gather at a
  // 2-byte scale instead of two gathers of knot pairs and the 64-bit interpolation
  // (expanded_table). Empty where it does not apply. One entry more than the inputs, so
  // that the gather's 4-byte read of the last one stays inside.
  std::array<cpu::AlignedVector<int16_t>, 3> lut16;
};

// The values of an interpolated table at every input it takes: lut(input_min + i) for
// i < inputs, then one padding 0; nothing for a direct table, one whose outputs leave
// int16 or one whose inputs span more than 2^16 values.
std::optional<cpu::AlignedVector<int16_t>> expanded_table(const ActivationLut& lut, int64_t inputs);

// The int16 lane form of a cell's plan (f complete but for it), or nothing: a plan of
// shifts, direct tables of 256 byte-sized entries, and every intermediate of the
// update, each shifted product operand and each rounding sum inside int16 (gru/int/fast/plan16.cpp).
std::optional<Lanes16Form> lanes16_form(const CellPlan& plan, const FastPlan& f);

// The fast plan of a cell, or nothing when an intermediate could leave int32 lanes.
std::optional<FastPlan> build_fast_plan(const CellPlan& plan);

// One instruction-set family's lane kernels (gru/int/fast/kernels_<family>.cpp). A family prepares, once
// per run, a state of its own (broadcast constants, per-row scales) that the per-step
// kernels read.
struct GruLaneKernels {
  const char* name;
  int lanes;            // int32 per vector
  size_t state_bytes;   // the prepared state's size (64-byte aligned storage)
  void (*prepare)(const CellPlan& plan, const FastPlan& fast, void* state);
  // One row of Wx accumulators (3H, int32 or int64) requantized: out[g * hp + j] for the
  // three gates g and j < hp (lanes past H read padding; their results are ignored).
  void (*requant_wx_s32)(const void* state, const int32_t* acc, int16_t* out);
  void (*requant_wx_s64)(const void* state, const int64_t* acc, int16_t* out);
  // One batch item's step: its Rh accumulators requantized, the unit update with its
  // requantized Wx row [3 * hp] and its state h (H values in h's storage type), and h'
  // written to y (H values, storage type).
  void (*step_s32)(const void* state, const int32_t* rh_acc, const int16_t* wx, const void* h, void* y);
  void (*step_s64)(const void* state, const int64_t* rh_acc, const int16_t* wx, const void* h, void* y);
};

// A family's table: its lane kernels, or null to inherit the next family's. The scalar
// family has none: the reference loop is its path.
struct GruKernels {
  const GruLaneKernels* lanes;
};

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(GruKernels, kGru)

// The tables of the families that bring kernels (gru/int/fast/registry.cpp).
cpu_detail::KernelRegistry<GruKernels>& registry();

// The lane kernels the active features select, or null: the reference loop.
const GruLaneKernels* active_lane_kernels();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (gru/int/fast/registry.cpp).
std::vector<KernelChoice> report_kernels();


// The requantized input projection of a block of steps, Wx [steps * batch, 3 * hp] per
// cell (the layout the step kernels read), as int16: Wx is an 8- or 16-bit operator, and
// its width is memory traffic between the projection and the steps that read it (a whole
// sequence's for a bidirectional layer, run_recurrence; a block's in run_cell_fast).
using WxRows = cpu::AlignedVector<int16_t>;

// Wx of `cells` cells that share the input q_x [rows, C]: one product with w, whose rows are
// the cells' W stacked ([cells * 3H, C]), then each cell's requantization of its slice.
// reverse_panels: W's panels last to first (gemm/driver.h).
void project_inputs(const GruLaneKernels& k, const CellPlan* const* cells, int count, const PackedB& w,
                    const void* q_x, int64_t rows, WxRows* const* out, bool reverse_panels = false);

// The time loop of one cell from its precomputed Wx (project_inputs); run_cell's contract
// otherwise. Its recurrent products alternate R's panel order (gemm/driver.h) from step to
// step, and from call to call on one thread (the first step of a call in the order opposite
// to the last product of the call before).
void run_recurrence(const GruLaneKernels& k, const CellPlan& plan, const FastPlan& fast, const WxRows& wx, int64_t steps,
                    int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y);

// Same contract as run_cell (gru/int/plan.h), computed with the given lane kernels.
void run_cell_fast(const GruLaneKernels& k, const CellPlan& plan, const FastPlan& fast, const void* q_x, int64_t steps,
                   int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y,
                   bool pipelined = false);

}  // namespace fixq::gru_detail
