// The AVX512_VBMI family's dots and matrix-vector products of Q3_K ... Q6_K: the kernels
// of kquants_avx512.h with their byte reorders as single vpermb instructions, and Q4_K in
// its own layout (nibble_planes_avx512vbmi.h). Measured on Zen 5 against the AVX-512
// family's (alternated runs, 128 x 4096 GEMV): see the README.
// The other 256-element formats keep the AVX-512 family's kernels (table_avx512vbmi.cpp).
#define FIXQ_GGUF_VBMI 1
#include "gguf/kquants_avx512.h"
#include "gguf/nibble_planes_avx512vbmi.h"
#include "gguf/kernels_avx512vbmi.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

FIXQ_GGUF_KQUANT_KERNELS(q3_k, RowDriver<Q3K>)
FIXQ_GGUF_KQUANT_KERNELS(q4_k, ScaleMinDriver<NibblePlanesLayout<BlockQ4_K>>)
FIXQ_GGUF_KQUANT_KERNELS(q5_k, ScaleMinDriver<NibblePlanesLayout<BlockQ5_K>>)
FIXQ_GGUF_KQUANT_KERNELS(q6_k, RowDriver<Q6K>)

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
