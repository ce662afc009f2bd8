// The AVX2 family's GGUF kernels, bit-identical to the scalar ones. Null entries (the
// quantizers with data-dependent searches) are inherited from the scalar family.
#include "gguf/kernels.h"

namespace fixq::gguf::detail::avx2 {

FIXQ_KERNEL_TABLE(GgufKernels, kGguf, Isa::Avx2){{{
                            {nullptr, dequantize_q4_0_avx2, dot_q4_0_q8_0_avx2, nullptr},
                            {nullptr, dequantize_q4_1_avx2, dot_q4_1_q8_1_avx2, nullptr},
                            {nullptr, dequantize_q5_0_avx2, dot_q5_0_q8_0_avx2, nullptr},
                            {nullptr, dequantize_q5_1_avx2, dot_q5_1_q8_1_avx2, nullptr},
                            {quantize_q8_0_avx2, dequantize_q8_0_avx2, dot_q8_0_q8_0_avx2, nullptr},
                            {quantize_q8_1_avx2, dequantize_q8_1_avx2, nullptr, nullptr},
                            {nullptr, dequantize_q2_k_avx2, dot_q2_k_q8_k_avx2, nullptr},
                            {nullptr, dequantize_q3_k_avx2, dot_q3_k_q8_k_avx2, nullptr},
                            {nullptr, dequantize_q4_k_avx2, dot_q4_k_q8_k_avx2, nullptr},
                            {nullptr, dequantize_q5_k_avx2, dot_q5_k_q8_k_avx2, nullptr},
                            {nullptr, dequantize_q6_k_avx2, dot_q6_k_q8_k_avx2, nullptr},
                            {quantize_q8_k_avx2, dequantize_q8_k_avx2, nullptr, nullptr},
                            {nullptr, dequantize_iq4_nl_avx2, dot_iq4_nl_q8_0_avx2, nullptr},
                            {nullptr, dequantize_iq4_xs_avx2, dot_iq4_xs_q8_k_avx2, nullptr},
                            {nullptr, dequantize_tq1_0_avx2, dot_tq1_0_q8_k_avx2, nullptr},
                            {nullptr, dequantize_tq2_0_avx2, dot_tq2_0_q8_k_avx2, nullptr},
                            {nullptr, dequantize_mxfp4_avx2, dot_mxfp4_q8_0_avx2, nullptr},
                            {nullptr, dequantize_nvfp4_avx2, dot_nvfp4_q8_0_avx2, nullptr},
                        }},
                        first_nonfinite_avx2};

}  // namespace fixq::gguf::detail::avx2
