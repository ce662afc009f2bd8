// The AVX-512 (F/BW/DQ/VL/VNNI) family's GGUF kernels: dequantize, dot and matvec of every
// format, bit-identical to the scalar ones. The quantizers are inherited (from AVX2 where it
// has them, else the scalar references with their data-dependent searches).
#include "gguf/kernels_avx512.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

FIXQ_KERNEL_TABLE(GgufKernels, kGguf, Isa::Avx512){{{
                            {nullptr, dequantize_q4_0, dot_q4_0_q8_0, matvec_q4_0_q8_0},
                            {nullptr, dequantize_q4_1, dot_q4_1_q8_1, matvec_q4_1_q8_1},
                            {nullptr, dequantize_q5_0, dot_q5_0_q8_0, matvec_q5_0_q8_0},
                            {nullptr, dequantize_q5_1, dot_q5_1_q8_1, matvec_q5_1_q8_1},
                            {nullptr, dequantize_q8_0, dot_q8_0_q8_0, matvec_q8_0_q8_0},
                            {nullptr, dequantize_q8_1, nullptr, nullptr},
                            {nullptr, dequantize_q2_k, dot_q2_k_q8_k, matvec_q2_k_q8_k},
                            {nullptr, dequantize_q3_k, dot_q3_k_q8_k, matvec_q3_k_q8_k},
                            {nullptr, dequantize_q4_k, dot_q4_k_q8_k, matvec_q4_k_q8_k},
                            {nullptr, dequantize_q5_k, dot_q5_k_q8_k, matvec_q5_k_q8_k},
                            {nullptr, dequantize_q6_k, dot_q6_k_q8_k, matvec_q6_k_q8_k},
                            {nullptr, dequantize_q8_k, nullptr, nullptr},
                            {nullptr, dequantize_iq4_nl, dot_iq4_nl_q8_0, matvec_iq4_nl_q8_0},
                            {nullptr, dequantize_iq4_xs, dot_iq4_xs_q8_k, matvec_iq4_xs_q8_k},
                            {nullptr, dequantize_tq1_0, dot_tq1_0_q8_k, matvec_tq1_0_q8_k},
                            {nullptr, dequantize_tq2_0, dot_tq2_0_q8_k, matvec_tq2_0_q8_k},
                            {nullptr, dequantize_mxfp4, dot_mxfp4_q8_0, matvec_mxfp4_q8_0},
                            {nullptr, dequantize_nvfp4, dot_nvfp4_q8_0, matvec_nvfp4_q8_0},
                        }},
                        nullptr};

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
