// The AVX-512 family's fast GRU step (gru/int/fast/step.h): sixteen hidden units per vector, the
// activation tables read with vpgatherdd.
#include "simd/lanes_avx512.h"

#include "gru/int/fast/step.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512) {

constexpr GruLaneKernels kLanesTable = lane_kernels<simd::Avx512>("avx512, 16 int32 lanes");

FIXQ_KERNEL_TABLE(GruKernels, kGru, Isa::Avx512){&kLanesTable};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512)
