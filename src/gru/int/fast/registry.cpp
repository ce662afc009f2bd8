// The fast GRU step's kernel list, one line per instruction-set family that brings lane
// kernels, and the choice among it.
#include "gru/int/fast/loop.h"

namespace fixq::gru_detail {

// The scalar family's path is the reference loop (gru/int/step_intonly.cpp): no lane kernels.
FIXQ_KERNEL_REGISTRY(GruKernels, "gru", kGru, avx512vbmi, avx512, avx2)

namespace {
cpu_detail::Picked<const GruLaneKernels*> pick_lanes() {
  return registry().find([](const GruKernels& k) { return k.lanes; });
}
}  // namespace

const GruLaneKernels* active_lane_kernels() { return pick_lanes().kernel; }

std::vector<KernelChoice> report_kernels() {
  const auto k = pick_lanes();
  return {{"gru step", k.kernel != nullptr ? k.kernel->name : "reference loop (scalar)", k.isa}};
}

}  // namespace fixq::gru_detail
