// The AVX512_VBMI family's GGUF kernels: dot and matvec of the 4-bit codebook formats (IQ4_NL,
// IQ4_XS, MXFP4, NVFP4) with vpermb lookups (dot_codebook_avx512vbmi.cpp), and of Q3_K ...
// Q6_K with vpermb byte reorders (dot_kquants_avx512vbmi.cpp). Every other kernel is
// inherited from the AVX-512 family, as measured on Zen 5 (gguf_bench, same run):
// - IQ4_XS's single dot: its activation reshuffle (once per call) is paid by one row there,
//   and the AVX-512 dot is 10-15% faster; from two rows on, matvec is this family's;
// - dequantize: bound by the stores of the float output (2 MiB of floats: ~70 GB/s of
//   stores, measured alone), and the AVX-512 dequantizers' vpermps lookups already turn a
//   code into its float in one instruction.
#include "gguf/kernels_avx512vbmi.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

FIXQ_KERNEL_TABLE(GgufKernels, kGguf, Isa::Avx512Vbmi){{{
                            {},  // q4_0
                            {},  // q4_1
                            {},  // q5_0
                            {},  // q5_1
                            {},  // q8_0
                            {},  // q8_1
                            {},  // q2_K
                            {nullptr, nullptr, dot_q3_k_q8_k, matvec_q3_k_q8_k},
                            {nullptr, nullptr, dot_q4_k_q8_k, matvec_q4_k_q8_k},
                            {nullptr, nullptr, dot_q5_k_q8_k, matvec_q5_k_q8_k},
                            {nullptr, nullptr, dot_q6_k_q8_k, matvec_q6_k_q8_k},
                            {},  // q8_K
                            {nullptr, nullptr, dot_iq4_nl_q8_0, matvec_iq4_nl_q8_0},
                            {nullptr, nullptr, nullptr, matvec_iq4_xs_q8_k},
                            {},  // tq1_0
                            {},  // tq2_0
                            {nullptr, nullptr, dot_mxfp4_q8_0, matvec_mxfp4_q8_0},
                            {nullptr, nullptr, dot_nvfp4_q8_0, matvec_nvfp4_q8_0},
                        }},
                        nullptr};

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
