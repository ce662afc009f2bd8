// The avx512 family's weight-only matmul: sixteen columns per vector (matmul_lanes.h).
#include "simd/lanes_avx512.h"

#include "weightonly/matmul_lanes.h"

namespace fixq::weightonly_detail::FIXQ_KERNEL_NS(avx512) {

FIXQ_KERNEL_TABLE(PackedKernels, kPacked, Isa::Avx512){PackedLanes<simd::Avx512>::dispatch};

}  // namespace fixq::weightonly_detail::FIXQ_KERNEL_NS(avx512)
