// The avx512 family's element conversions and OCP MX blocks: sixteen values per step
// (kernels_lanes.h).
#include "simd/lanes_avx512.h"

#include "lowp/kernels_lanes.h"

namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512) {

FIXQ_KERNEL_TABLE(LowpKernels, kLowp, Isa::Avx512){make_lowp_kernels<LowpLanes<simd::Avx512>>()};

}  // namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512)
