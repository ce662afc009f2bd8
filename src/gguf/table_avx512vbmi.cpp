// The AVX512_VBMI family's GGUF kernels: dot and matvec of the 4-bit table formats (IQ4_NL,
// IQ4_XS, MXFP4, NVFP4) with vpermb lookups (nonlinear_avx512vbmi.cpp). Every other kernel
// is inherited from the AVX-512 family: dequantizing is bound by the stores of its float
// output, and the AVX-512 dequantizers' vpermps lookups already produce the floats directly.
#include "gguf/kernels_avx512vbmi.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

extern const GgufKernels kGguf;
const GgufKernels kGguf{{{
                            {},  // q4_0
                            {},  // q4_1
                            {},  // q5_0
                            {},  // q5_1
                            {},  // q8_0
                            {},  // q8_1
                            {},  // q2_K
                            {},  // q3_K
                            {},  // q4_K
                            {},  // q5_K
                            {},  // q6_K
                            {},  // q8_K
                            {nullptr, nullptr, dot_iq4_nl_q8_0, matvec_iq4_nl_q8_0},
                            {nullptr, nullptr, dot_iq4_xs_q8_k, matvec_iq4_xs_q8_k},
                            {},  // tq1_0
                            {},  // tq2_0
                            {nullptr, nullptr, dot_mxfp4_q8_0, matvec_mxfp4_q8_0},
                            {nullptr, nullptr, dot_nvfp4_q8_0, matvec_nvfp4_q8_0},
                        }},
                        nullptr};

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
