// The scalar family's GGUF kernels: ggml's reference algorithms, the definition of every
// format's bytes and bits (kernels.h). Indexed by Type.
#include "gguf/kernels.h"

namespace fixq::gguf::detail::scalar {

FIXQ_KERNEL_TABLE(GgufKernels, kGguf, Isa::Scalar){{{
                            {quantize_q4_0_ref, dequantize_q4_0_ref, dot_q4_0_q8_0_ref, nullptr},
                            {quantize_q4_1_ref, dequantize_q4_1_ref, dot_q4_1_q8_1_ref, nullptr},
                            {quantize_q5_0_ref, dequantize_q5_0_ref, dot_q5_0_q8_0_ref, nullptr},
                            {quantize_q5_1_ref, dequantize_q5_1_ref, dot_q5_1_q8_1_ref, nullptr},
                            {quantize_q8_0_ref, dequantize_q8_0_ref, dot_q8_0_q8_0_ref, nullptr},
                            {quantize_q8_1_ref, dequantize_q8_1_ref, nullptr, nullptr},
                            {quantize_q2_k_ref, dequantize_q2_k_ref, dot_q2_k_q8_k_ref, nullptr},
                            {quantize_q3_k_ref, dequantize_q3_k_ref, dot_q3_k_q8_k_ref, nullptr},
                            {quantize_q4_k_ref, dequantize_q4_k_ref, dot_q4_k_q8_k_ref, nullptr},
                            {quantize_q5_k_ref, dequantize_q5_k_ref, dot_q5_k_q8_k_ref, nullptr},
                            {quantize_q6_k_ref, dequantize_q6_k_ref, dot_q6_k_q8_k_ref, nullptr},
                            {quantize_q8_k_ref, dequantize_q8_k_ref, nullptr, nullptr},
                            {quantize_iq4_nl_ref, dequantize_iq4_nl_ref, dot_iq4_nl_q8_0_ref, nullptr},
                            {quantize_iq4_xs_ref, dequantize_iq4_xs_ref, dot_iq4_xs_q8_k_ref, nullptr},
                            {quantize_tq1_0_ref, dequantize_tq1_0_ref, dot_tq1_0_q8_k_ref, nullptr},
                            {quantize_tq2_0_ref, dequantize_tq2_0_ref, dot_tq2_0_q8_k_ref, nullptr},
                            {quantize_mxfp4_ref, dequantize_mxfp4_ref, dot_mxfp4_q8_0_ref, nullptr},
                            {quantize_nvfp4_ref, dequantize_nvfp4_ref, dot_nvfp4_q8_0_ref, nullptr},
                        }},
                        first_nonfinite_ref};

}  // namespace fixq::gguf::detail::scalar
