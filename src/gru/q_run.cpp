// run_cell: picks the fast loop or the reference for one cell (q_plan.h).
#include "fixq/cpu.h"
#include "gru/q_fast.h"

namespace fixq::gru_detail {

void run_cell(const CellPlan& plan, const void* q_x, int64_t steps, int64_t batch, const std::vector<int64_t>& lengths,
              bool reverse, void* q_h, void* q_y) {
  if (plan.fast && (active_features() & kFeatureAvx2) != 0)
    run_cell_fast(plan, *plan.fast, q_x, steps, batch, lengths, reverse, q_h, q_y);
  else
    run_cell_reference(plan, q_x, steps, batch, lengths, reverse, q_h, q_y);
}

}  // namespace fixq::gru_detail

namespace fixq::gru_detail {

std::string fast_kernel_name() {
  return (active_features() & kFeatureAvx2) != 0 ? "avx2 (8 int32 lanes)" : "reference loop (scalar)";
}

}  // namespace fixq::gru_detail
