// The AVX-512 family's dots and matrix-vector products of the 256-element formats with
// Q8_K (K-quants, IQ4_XS, TQ1_0, TQ2_0); the kernels are dot_kquants_avx512.inc's.
#include "gguf/dot_kquants_avx512.inc"
#include "gguf/kernels_avx512.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

FIXQ_GGUF_KQUANT_KERNELS(q2_k, QuadDriver<Q2K>)
FIXQ_GGUF_KQUANT_KERNELS(q3_k, RowDriver<Q3K>)
FIXQ_GGUF_KQUANT_KERNELS(q4_k, ScaleMinDriver<Q4KClassLayout>)
FIXQ_GGUF_KQUANT_KERNELS(q5_k, RowDriver<Q5K>)
FIXQ_GGUF_KQUANT_KERNELS(q6_k, RowDriver<Q6K>)
FIXQ_GGUF_KQUANT_KERNELS(tq1_0, QuadDriver<Tq1>)
FIXQ_GGUF_KQUANT_KERNELS(tq2_0, QuadDriver<Tq2>)
FIXQ_GGUF_KQUANT_KERNELS(iq4_xs, TermsDriver<Iq4Xs>)

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
