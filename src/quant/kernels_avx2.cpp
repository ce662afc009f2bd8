// The avx2 family's quantize / dequantize kernels: eight lanes per step (kernels_lanes.h).
#include "simd/lanes_avx2.h"

#include "quant/kernels_lanes.h"

namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(QuantTable, kQuant, Isa::Avx2){make_quant_table<QuantLanes<simd::Avx2>>()};

}  // namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx2)
