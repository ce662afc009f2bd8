// Private: the AVX512_VBMI family's GGUF kernels (the 4-bit codebook formats, Q3_K ... Q6_K), declared for its
// table (kernels_avx512vbmi.cpp). Include only from *_avx512vbmi.cpp files: natively they live
// in namespace avx512vbmi, in the tests' SIMDe build in avx512vbmi_emulated (src/cpu/x86.h).
#pragma once

#include "cpu/x86.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

#define FIXQ_GGUF_VBMI_DOT(x, y) FIXQ_GGUF_DECLARE_DOT(x, y, ) FIXQ_GGUF_DECLARE_MATVEC(x, y, )
FIXQ_GGUF_VBMI_DOT(iq4_nl, q8_0)
FIXQ_GGUF_DECLARE_MATVEC(iq4_xs, q8_k, )  // its single dot is the AVX-512 one (kernels_avx512vbmi.cpp)
FIXQ_GGUF_VBMI_DOT(mxfp4, q8_0)
FIXQ_GGUF_VBMI_DOT(nvfp4, q8_0)
FIXQ_GGUF_VBMI_DOT(q3_k, q8_k)
FIXQ_GGUF_VBMI_DOT(q4_k, q8_k)
FIXQ_GGUF_VBMI_DOT(q5_k, q8_k)
FIXQ_GGUF_VBMI_DOT(q6_k, q8_k)
#undef FIXQ_GGUF_VBMI_DOT

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
