// The avx2 family's weight-only matmul: eight columns per vector (matmul_lanes.h).
#include "simd/lanes_avx2.h"

#include "packed/matmul_lanes.h"

namespace fixq::packed_detail::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(PackedKernels, kPacked, Isa::Avx2){PackedLanes<simd::Avx2>::dispatch};

}  // namespace fixq::packed_detail::FIXQ_KERNEL_NS(avx2)
