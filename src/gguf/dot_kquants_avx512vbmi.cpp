// The AVX512_VBMI family's dots and matrix-vector products of Q3_K ... Q6_K: the kernels
// of kquants_avx512.h with their byte reorders as single vpermb instructions. Measured on
// Zen 5 against the AVX-512 family's (alternated runs, 128 x 4096 GEMV): see the README.
// The other 256-element formats keep the AVX-512 family's kernels (table_avx512vbmi.cpp).
#define FIXQ_GGUF_VBMI 1
#include "gguf/kquants_avx512.h"
#include "gguf/kernels_avx512vbmi.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

float dot_q3_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<RowDriver<Q3K>>(x, y, n); }
float dot_q4_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<Q4K>(x, y, n); }
float dot_q5_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<RowDriver<Q5K>>(x, y, n); }
float dot_q6_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<RowDriver<Q6K>>(x, y, n); }

void matvec_q3_k_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  RowDriver<Q3K>::matvec(x, rows, n, y, out);
}
void matvec_q4_k_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  Q4K::matvec(x, rows, n, y, out);
}
void matvec_q5_k_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  RowDriver<Q5K>::matvec(x, rows, n, y, out);
}
void matvec_q6_k_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  RowDriver<Q6K>::matvec(x, rows, n, y, out);
}

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
