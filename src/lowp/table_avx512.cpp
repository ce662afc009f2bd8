// The AVX-512 family's table: the element conversions (convert_avx512.cpp) and MX blocks
// (mx_avx512.cpp).
#include "cpu/x86.h"
#include "lowp/kernels.h"

namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512) {

extern const ConvertKernels kConvert;
extern const MxKernels kMx;

extern const LowpKernels kLowp;
const LowpKernels kLowp{kConvert, kMx};

}  // namespace fixq::lowp_detail::FIXQ_KERNEL_NS(avx512)
