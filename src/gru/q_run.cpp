// run_cell: the fast loop with the best lane kernels the CPU has, for cells with a fast
// plan, else the reference (q_plan.h); and the GRU's kernel list.
#include "fixq/cpu.h"
#include "gru/q_fast.h"

namespace fixq::gru_detail {

cpu_detail::KernelRegistry<GruKernels>& registry() {
  // The scalar family's path is the reference loop (q_step_intonly.cpp): no lane kernels.
  static cpu_detail::KernelRegistry<GruKernels> r("gru", {
                                                             {Isa::Avx512Bf16, nullptr},  // as avx512
                                                             {Isa::Avx512Vbmi, nullptr},  // as avx512
                                                             {Isa::Avx512, &avx512::kGru},
                                                             {Isa::Avx2, &avx2::kGru},
                                                             {Isa::Scalar, nullptr},
                                                         });
  return r;
}

const GruLaneKernels* active_lane_kernels() {
  return registry().find([](const GruKernels& k) { return k.lanes; }).kernel;
}

std::string fast_kernel_name() {
  const GruLaneKernels* k = active_lane_kernels();
  return k != nullptr ? k->name : "reference loop (scalar)";
}

void run_cell(const CellPlan& plan, const void* q_x, int64_t steps, int64_t batch, const std::vector<int64_t>& lengths,
              bool reverse, void* q_h, void* q_y) {
  const GruLaneKernels* k = plan.fast ? active_lane_kernels() : nullptr;
  if (k != nullptr)
    run_cell_fast(*k, plan, *plan.fast, q_x, steps, batch, lengths, reverse, q_h, q_y);
  else
    run_cell_reference(plan, q_x, steps, batch, lengths, reverse, q_h, q_y);
}

}  // namespace fixq::gru_detail
