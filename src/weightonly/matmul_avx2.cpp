// The avx2 family's weight-only matmul: eight columns per vector (matmul_lanes.h).
#include "simd/lanes_avx2.h"

#include "weightonly/matmul_lanes.h"

namespace fixq::weightonly_detail::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(PackedKernels, kPacked, Isa::Avx2){PackedLanes<simd::Avx2>::dispatch};

}  // namespace fixq::weightonly_detail::FIXQ_KERNEL_NS(avx2)
