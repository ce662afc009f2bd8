// The avx512 family's quantize / dequantize kernels: sixteen lanes per step (kernels_lanes.h).
#include "simd/lanes_avx512.h"

#include "quant/kernels_lanes.h"

namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx512) {

FIXQ_KERNEL_TABLE(QuantTable, kQuant, Isa::Avx512){make_quant_table<QuantLanes<simd::Avx512>>()};

}  // namespace fixq::quant_detail::FIXQ_KERNEL_NS(avx512)
