// The model kernels' list, one word per instruction-set family that brings a table, and the
// choice among it. The scalar family's path is the element loops of int_ops.cpp.
#include "model/kernels.h"

namespace fixq::model_detail {

FIXQ_KERNEL_REGISTRY(ModelKernels, "model", kModel, avx512vbmi, avx512, avx2)

namespace {
cpu_detail::Picked<const ModelKernels*> pick() {
  return registry().find([](const ModelKernels& k) { return &k; });
}
}  // namespace

const ModelKernels* active_model_kernels() { return pick().kernel; }

std::vector<KernelChoice> report_kernels() {
  const auto k = pick();
  return {{"model requantize", k.kernel != nullptr ? k.kernel->name : "element loop (scalar)", k.isa}};
}

}  // namespace fixq::model_detail
