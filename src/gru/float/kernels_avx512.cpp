// The float GRU's avx512 kernels (gru/float/kernels_lanes.h): tiles of 6 rows by 64 outputs (one row by 128 at batch 1), sixteen units per vector.
#include "simd/lanes_avx512.h"

#include "gru/float/kernels_lanes.h"

namespace fixq::gru_float::FIXQ_KERNEL_NS(avx512) {

FIXQ_KERNEL_TABLE(FloatKernels, kFloat, Isa::Avx512){"avx512", FloatGruLanes<simd::Avx512>::matmul, FloatGruLanes<simd::Avx512>::pack,
                                                     FloatGruLanes<simd::Avx512>::gates};

}  // namespace fixq::gru_float::FIXQ_KERNEL_NS(avx512)
