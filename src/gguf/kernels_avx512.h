// Private: the AVX-512 (F/BW/DQ/VL/VNNI) family's GGUF kernels, declared for its table
// (table_avx512.cpp). Include only from *_avx512.cpp files: natively they live in namespace
// avx512, in the tests' SIMDe build in avx512_emulated (src/cpu/x86.h).
#pragma once

#include "cpu/x86.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

#define FIXQ_GGUF_FORMAT(name)                                                 \
  void dequantize_##name(const std::byte* in, int64_t n_blocks, float* out);
FIXQ_GGUF_FORMAT(q4_0)
FIXQ_GGUF_FORMAT(q4_1)
FIXQ_GGUF_FORMAT(q5_0)
FIXQ_GGUF_FORMAT(q5_1)
FIXQ_GGUF_FORMAT(q8_0)
FIXQ_GGUF_FORMAT(q8_1)
FIXQ_GGUF_FORMAT(q2_k)
FIXQ_GGUF_FORMAT(q3_k)
FIXQ_GGUF_FORMAT(q4_k)
FIXQ_GGUF_FORMAT(q5_k)
FIXQ_GGUF_FORMAT(q6_k)
FIXQ_GGUF_FORMAT(q8_k)
FIXQ_GGUF_FORMAT(iq4_nl)
FIXQ_GGUF_FORMAT(iq4_xs)
FIXQ_GGUF_FORMAT(tq1_0)
FIXQ_GGUF_FORMAT(tq2_0)
FIXQ_GGUF_FORMAT(mxfp4)
FIXQ_GGUF_FORMAT(nvfp4)
#undef FIXQ_GGUF_FORMAT

#define FIXQ_GGUF_DOT(x, y)                                                          \
  float dot_##x##_##y(const std::byte* a, const std::byte* b, int64_t n_blocks);     \
  void matvec_##x##_##y(const std::byte* a, int64_t rows, int64_t n_blocks, const std::byte* b, float* out);
FIXQ_GGUF_DOT(q4_0, q8_0)
FIXQ_GGUF_DOT(q4_1, q8_1)
FIXQ_GGUF_DOT(q5_0, q8_0)
FIXQ_GGUF_DOT(q5_1, q8_1)
FIXQ_GGUF_DOT(q8_0, q8_0)
FIXQ_GGUF_DOT(q2_k, q8_k)
FIXQ_GGUF_DOT(q3_k, q8_k)
FIXQ_GGUF_DOT(q4_k, q8_k)
FIXQ_GGUF_DOT(q5_k, q8_k)
FIXQ_GGUF_DOT(q6_k, q8_k)
FIXQ_GGUF_DOT(iq4_nl, q8_0)
FIXQ_GGUF_DOT(iq4_xs, q8_k)
FIXQ_GGUF_DOT(tq1_0, q8_k)
FIXQ_GGUF_DOT(tq2_0, q8_k)
FIXQ_GGUF_DOT(mxfp4, q8_0)
FIXQ_GGUF_DOT(nvfp4, q8_0)
#undef FIXQ_GGUF_DOT

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
