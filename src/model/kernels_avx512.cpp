// The avx512 family's model kernels: sixteen int32 lanes per step (kernels_lanes.h).
#include "simd/lanes_avx512.h"

#include "model/kernels_lanes.h"

namespace fixq::model_detail::FIXQ_KERNEL_NS(avx512) {

FIXQ_KERNEL_TABLE(ModelKernels, kModel, Isa::Avx512){model_kernels<simd::Avx512>("avx512, 16 int32 lanes")};

}  // namespace fixq::model_detail::FIXQ_KERNEL_NS(avx512)
