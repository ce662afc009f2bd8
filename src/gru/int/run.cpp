// run_cell: the fast loop with the best lane kernels the CPU has (gru/int/fast/registry.cpp), for
// cells with a fast plan, else the reference (gru/int/plan.h); and the two directions of a
// bidirectional layer.
#include <exception>
#include <thread>
#include <utility>

#include "cpu/thread_pool.h"
#include "fixq/cpu.h"
#include "gru/int/fast/loop.h"

namespace fixq::gru_detail {

namespace {

// f(0) and f(1): on two threads (the shared workers, cpu/thread_pool.h) when two_threads,
// else in turn. An exception from either is rethrown after both finished.
template <class F>
void run_concurrently(F& f, bool two_threads) {
  if (!two_threads) {
    f(0);
    f(1);
    return;
  }
  cpu_detail::parallel_for(2, [&](int d) { f(d); });
}

}  // namespace

void run_cell(const CellPlan& plan, const void* q_x, int64_t steps, int64_t batch, const std::vector<int64_t>& lengths,
              bool reverse, void* q_h, void* q_y, bool pipelined) {
  if (plan.kind == GruCellKind::ResetBefore) {
    run_cell_reset_before_reference(plan, q_x, steps, batch, lengths, reverse, q_h, q_y);
    return;
  }
  const GruLaneKernels* k = plan.fast ? active_lane_kernels() : nullptr;
  if (k != nullptr)
    run_cell_fast(*k, plan, *plan.fast, q_x, steps, batch, lengths, reverse, q_h, q_y, pipelined);
  else
    run_cell_reference(plan, q_x, steps, batch, lengths, reverse, q_h, q_y);
}

void pair_directions(CellPlan& fwd, const CellPlan& bwd) {
  fwd.w_pair = nullptr;
  if (!fwd.fast || !bwd.fast || fwd.x.storage != bwd.x.storage || fwd.fast->acc64_x != bwd.fast->acc64_x ||
      fwd.w.type() != bwd.w.type() || fwd.input_size != bwd.input_size || fwd.hidden_size != bwd.hidden_size)
    return;
  const int64_t rows = 6 * fwd.hidden_size, cols = fwd.input_size;
  auto stacked = [&](auto zero) {
    std::vector<decltype(zero)> v;
    v.reserve(static_cast<size_t>(rows * cols));
    for (const std::vector<int32_t>* q : {&std::as_const(fwd.q_w), &bwd.q_w})
      for (int32_t e : *q) v.push_back(static_cast<decltype(zero)>(e));  // in the type's range (build_plan)
    return PackedB::pack(MatrixView{fwd.w.type(), v.data(), rows, cols, cols});
  };
  fwd.w_pair = std::make_shared<const PackedB>(fwd.w.type() == IntType::S16 ? stacked(int16_t{0}) : stacked(int8_t{0}));
}

void run_layer_pair(const CellPlan& fwd, const CellPlan& bwd, const void* q_x, int64_t steps, int64_t batch,
                    const std::vector<int64_t>& lengths, void* q_h_fwd, void* q_y_fwd, void* q_h_bwd, void* q_y_bwd,
                    bool two_threads) {
  const GruLaneKernels* k = fwd.w_pair ? active_lane_kernels() : nullptr;
  if (k == nullptr) {
    auto run_direction = [&](int d) {
      if (d == 0) run_cell(fwd, q_x, steps, batch, lengths, false, q_h_fwd, q_y_fwd);
      else run_cell(bwd, q_x, steps, batch, lengths, true, q_h_bwd, q_y_bwd);
    };
    run_concurrently(run_direction, two_threads);
    return;
  }
  // Both directions' Wx from one product, then the two time loops.
  WxRows wx[2];
  const CellPlan* cells[] = {&fwd, &bwd};
  WxRows* out[] = {&wx[0], &wx[1]};
  project_inputs(*k, cells, 2, *fwd.w_pair, q_x, steps * batch, out);
  auto run_direction = [&](int d) {
    if (d == 0) run_recurrence(*k, fwd, *fwd.fast, wx[0], steps, batch, lengths, false, q_h_fwd, q_y_fwd);
    else run_recurrence(*k, bwd, *bwd.fast, wx[1], steps, batch, lengths, true, q_h_bwd, q_y_bwd);
  };
  run_concurrently(run_direction, two_threads);
}

}  // namespace fixq::gru_detail
