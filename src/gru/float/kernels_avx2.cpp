// The float GRU's avx2 kernels (gru/float/kernels_lanes.h): two ymm registers per output's sixteen partial sums, eight units per vector.
#include "simd/lanes_avx2.h"

#include "gru/float/kernels_lanes.h"

namespace fixq::gru_float::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(FloatKernels, kFloat, Isa::Avx2){"avx2", FloatGruLanes<simd::Avx2>::matmul_nt, FloatGruLanes<simd::Avx2>::gates};

}  // namespace fixq::gru_float::FIXQ_KERNEL_NS(avx2)
