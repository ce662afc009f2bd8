// The AVX2 family's fast GRU step (gru/int/fast/step.h): eight hidden units per vector, the
// activation tables read with vpgatherdd.
#include "simd/lanes_avx2.h"

#include "gru/int/fast/step.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx2) {

constexpr GruLaneKernels kLanesTable = lane_kernels<simd::Avx2>("avx2, 8 int32 lanes");

FIXQ_KERNEL_TABLE(GruKernels, kGru, Isa::Avx2){&kLanesTable};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx2)
