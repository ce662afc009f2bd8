// Private: everything the integer loop of one layer direction needs, prepared once from
// the parameters (docs/spec.md section 4: ratios, zero-point compensation and bias terms
// precomputed).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fixq/arith.h"
#include "fixq/gemm.h"
#include "fixq/qgru.h"
#include "gru/int/lut_eval.h"
#include "gru/int/unit_constants.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {

// The integer range and zero point of one per-tensor operator.
struct OpQ {
  int32_t zp = 0;
  IntRange range;
  IntType storage = IntType::S8;  // s8 for 8 bits, s16 for 16
};

struct FastPlan;        // gru/int/fast/loop.h
struct GruLaneKernels;  // gru/int/fast/loop.h
struct CellPlan;

// The lane kernels' prepared states of one cell (GruLaneKernels::prepare), made at first use
// per family and kept with the plan: a streaming step rebuilt them twice per frame (15% of
// a one-frame step at H = 256). Lookups take no lock, so threads that share a model share
// its states. A copy of a plan starts empty: the states point into the plan they were made
// from.
class PreparedLaneStates {
 public:
  PreparedLaneStates() = default;
  PreparedLaneStates(const PreparedLaneStates&) {}
  PreparedLaneStates& operator=(const PreparedLaneStates&);
  // k's state for this cell, prepared now if it is the first request (gru/int/fast/loop.cpp).
  const void* get(const GruLaneKernels& k, const CellPlan& plan, const FastPlan& fast) const;

 private:
  struct Slot {
    std::atomic<const GruLaneKernels*> kernels{nullptr};  // set last, once the state is ready
    std::unique_ptr<unsigned char[]> storage;
    const void* state = nullptr;
  };
  mutable std::array<Slot, 8> slots_;  // more than the families of lane kernels
  mutable std::mutex mutex_;           // serialises the first preparations
};

struct CellPlan {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  OpQ x, h, wx, rh, z_pre, r_pre, g_pre, z_out, r_out, g_out, rh_add_br, rrh, old_c, new_c;

  PackedB w, r;                                  // quantized W [3H, C], R [3H, H]
  std::vector<int32_t> q_w, q_r, q_bx, q_br;     // the integer weights, as saved
  std::vector<FixedPointScale> wx_scale, rh_scale;  // per row: S_W[j] S_x / S_Wx, S_R[j] S_h / S_Rh

  FixedPointScale wx_to_z, rh_to_z, wx_to_r, rh_to_r;  // S_Wx / S_z_pre, ...
  FixedPointScale rh_to_rhab, wx_to_g, rrh_to_g;        // S_Rh / S_Rh_add_br, S_Wx / S_g_pre, S_rRh / S_g_pre
  FixedPointScale rrh_mul, old_mul, new_mul;            // products' S_a S_b / S_out
  FixedPointScale old_to_h, new_to_h;                   // S_old / S_h, S_new / S_h
  std::vector<int32_t> bias_z, bias_r, bias_rhab, bias_g;  // [H] constants in their targets' LSBs
  int32_t q_one = 0;                                    // round(1 / S_z_out) + Z_z_out

  ActivationLut sig_z, sig_r, tanh_g;

  // The reset-before cell (docs/spec.md 5.4): r * h -> h (S_r_out) and Rh -> g_pre, and R
  // in two parts, the rows of z and r [2H, H] (times h) and those of g [H, H] (times r * h).
  // bias_g then holds bx_g + br_g; rh_to_rhab, rrh_to_g, rrh_mul and bias_rhab are unused.
  // A reset-before cell has no fast plan: run_cell takes its reference loop.
  GruCellKind kind = GruCellKind::ResetAfter;
  FixedPointScale reset_mul, rh_to_g;
  PackedB r_zr, r_g;

  // The vectorised loop's plan (gru/int/fast/loop.h); null when its int32 lanes could not be exact.
  std::shared_ptr<const FastPlan> fast;
  // On the forward cell of a bidirectional layer whose two cells both have fast plans: W
  // of both directions stacked [6H, C], so that one product reads x once for both
  // (pair_directions); null otherwise.
  std::shared_ptr<const PackedB> w_pair;
  PreparedLaneStates prepared;  // fast's states per family of lane kernels
};

// The plan's parts by the names of the unit update (gru/int/unit_update.h), gathered once so
// that every domain reads them by index.
struct CellRefs {
  std::array<const OpQ*, 13> operand;             // [Operand]
  std::array<const FixedPointScale*, 12> scale;   // [UnitScale]
  std::array<const ActivationLut*, 3> lut;        // [UnitLut]
  std::array<const std::vector<int32_t>*, 4> bias;  // [UnitBias], per unit
  std::array<int32_t, 4> bias_zp;                 // the zero point of each bias's target
  int32_t q_one;                                  // 1 in z_out's parameters

  explicit CellRefs(const CellPlan& p);
  const OpQ& op(Operand o) const { return *operand[static_cast<size_t>(o)]; }
  const FixedPointScale& ratio(UnitScale s) const { return *scale[static_cast<size_t>(s)]; }
  const ActivationLut& table(UnitLut l) const { return *lut[static_cast<size_t>(l)]; }
};

// The same constants as plain values, for the exact domain (gru/int/unit_constants.h); the
// pointers point into the plan.
UnitConstants unit_constants(const CellRefs& c);

// The plain view of a table that activation_lookup reads (gru/int/lut_eval.h).
inline LutView lut_view(const ActivationLut& l) {
  return {l.table().data(), l.input_min(), l.shift(), l.frac_bits(), l.output_range()};
}

// The entries of a cell's three activation tables as a .fixq file stores them.
struct StoredTables {
  std::vector<int32_t> sig_z, sig_r, tanh_g;
  std::string file;  // for messages
  size_t cell = 0;
};

// Builds the plan of one cell from its integer weights and parameters. The activation
// tables are computed from the parameters (ActivationLut::build), or taken from `stored`.
CellPlan build_plan(const GruCellParams& p, const GruQuantConfig& config, int64_t input_size, int64_t hidden_size,
                    std::vector<int32_t> q_w, std::vector<int32_t> q_r, std::vector<int32_t> q_bx,
                    std::vector<int32_t> q_br, StoredTables* stored = nullptr,
                    GruCellKind kind = GruCellKind::ResetAfter);

// Sets fwd.w_pair when both cells of a bidirectional layer can share one input product:
// both have fast plans and the same x storage and accumulator width.
void pair_directions(CellPlan& fwd, const CellPlan& bwd);

// Both directions of a bidirectional layer (run_cell's contract for each, fwd forward and
// bwd reversed), their input projections computed as one product when fwd.w_pair is set;
// else run_cell twice. With two_threads, the reverse direction's time loop runs on a
// second thread (same integers either way).
void run_layer_pair(const CellPlan& fwd, const CellPlan& bwd, const void* q_x, int64_t steps, int64_t batch,
                    const std::vector<int64_t>& lengths, void* q_h_fwd, void* q_y_fwd, void* q_h_bwd, void* q_y_bwd,
                    bool two_threads);

// The integer time loop of one cell: the fast path (gru/int/fast/loop.cpp) when the CPU has
// AVX2 and the cell has a fast plan, else the reference (gru/int/step_intonly.cpp, no float
// code); both compute the same integers.
//   q_x    [T, B, C] the layer input in this cell's x parameters (storage x.storage)
//   q_h    [B, H] initial state in h's parameters (updated in place)
//   q_y    [T, B, H] written for every real step, padding untouched (storage h.storage)
//   lengths[b] real steps of item b (all T when empty); reverse runs each item from its
//   last real step back to 0.
//   pipelined: the fast path projects the next block of steps' inputs on a second thread
//   while this one runs the block's recurrence (run_cell_fast); the same integers.
void run_cell(const CellPlan& plan, const void* q_x, int64_t steps, int64_t batch, const std::vector<int64_t>& lengths,
              bool reverse, void* q_h, void* q_y, bool pipelined = false);
void run_cell_reference(const CellPlan& plan, const void* q_x, int64_t steps, int64_t batch,
                        const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y);
// The reference loop of a reset-before cell (gru/int/step_reset_before_intonly.cpp, no
// float code), run_cell's contract.
void run_cell_reset_before_reference(const CellPlan& plan, const void* q_x, int64_t steps, int64_t batch,
                                     const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y);

}  // namespace fixq::gru_detail
