// The avx2 family's model kernels: eight int32 lanes per step (kernels_lanes.h).
#include "simd/lanes_avx2.h"

#include "model/kernels_lanes.h"

namespace fixq::model_detail::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(ModelKernels, kModel, Isa::Avx2){model_kernels<simd::Avx2>("avx2, 8 int32 lanes")};

}  // namespace fixq::model_detail::FIXQ_KERNEL_NS(avx2)
