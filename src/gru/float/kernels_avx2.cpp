// The float GRU's avx2 kernels (gru/float/kernels_lanes.h): tiles of 3 rows by 32 outputs (one row by 64 at batch 1), eight units per vector.
#include "simd/lanes_avx2.h"

#include "gru/float/kernels_lanes.h"

namespace fixq::gru_float::FIXQ_KERNEL_NS(avx2) {

FIXQ_KERNEL_TABLE(FloatKernels, kFloat, Isa::Avx2){"avx2", FloatGruLanes<simd::Avx2>::matmul, FloatGruLanes<simd::Avx2>::pack,
                                                   FloatGruLanes<simd::Avx2>::gates};

}  // namespace fixq::gru_float::FIXQ_KERNEL_NS(avx2)
