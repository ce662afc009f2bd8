// Private: the AVX-512 (F/BW/DQ/VL/VNNI) family's GGUF kernels, declared for its table
// (kernels_avx512.cpp). Include only from *_avx512.cpp files: natively they live in namespace
// avx512, in the tests' SIMDe build in avx512_emulated (src/cpu/x86.h).
#pragma once

#include "cpu/x86.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

// Every dequantizer, dot product and matrix-vector product (kernels.h's lists).
#define FIXQ_GGUF_AVX512_DEQUANTIZE(name) FIXQ_GGUF_DECLARE_DEQUANTIZE(name, )
#define FIXQ_GGUF_AVX512_DOT(x, y) FIXQ_GGUF_DECLARE_DOT(x, y, ) FIXQ_GGUF_DECLARE_MATVEC(x, y, )
FIXQ_GGUF_EACH_FORMAT(FIXQ_GGUF_AVX512_DEQUANTIZE)
FIXQ_GGUF_EACH_DOT(FIXQ_GGUF_AVX512_DOT)
#undef FIXQ_GGUF_AVX512_DEQUANTIZE
#undef FIXQ_GGUF_AVX512_DOT

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
