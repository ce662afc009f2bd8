// The avx512vbmi family's model kernels: the avx512 ones, with an 8-bit value's table of
// byte entries in four registers and read with vpermi2b instead of gathered (kernels_lanes.h).
#include "simd/lanes_avx512vbmi.h"

#include "model/kernels_lanes.h"

namespace fixq::model_detail::FIXQ_KERNEL_NS(avx512vbmi) {

FIXQ_KERNEL_TABLE(ModelKernels, kModel, Isa::Avx512Vbmi){
    model_kernels<simd::Avx512Vbmi>("avx512vbmi, 16 int32 lanes, vpermi2b byte tables")};

}  // namespace fixq::model_detail::FIXQ_KERNEL_NS(avx512vbmi)
