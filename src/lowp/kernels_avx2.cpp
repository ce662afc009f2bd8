// The avx2 family's element conversions and OCP MX blocks: eight values per step
// (kernels_lanes.h).
#include "simd/lanes_avx2.h"

#include "lowp/kernels_lanes.h"

namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(LowpKernels, kLowp, Isa::Avx2){make_lowp_kernels<LowpLanes<simd::Avx2>>()};

}  // namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx2)
