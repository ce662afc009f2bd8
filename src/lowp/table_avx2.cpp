// The AVX2 family's table: the element conversions (convert_avx2.cpp) and MX blocks
// (mx_avx2.cpp).
#include "lowp/kernels.h"

namespace fixq::lowp_detail::avx2 {

extern const ConvertKernels kAvx2Convert;
extern const MxKernels kAvx2Mx;

extern const LowpKernels kLowp;
const LowpKernels kLowp{kAvx2Convert, kAvx2Mx};

}  // namespace fixq::lowp_detail::avx2
