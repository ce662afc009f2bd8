// The AVX-512 family's dots and matrix-vector products of the 256-element formats with
// Q8_K (K-quants, IQ4_XS, TQ1_0, TQ2_0); the kernels are kquants_avx512.h's.
#include "gguf/kquants_avx512.h"
#include "gguf/kernels_avx512.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

float dot_q2_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<QuadDriver<Q2K>>(x, y, n); }
float dot_q3_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<RowDriver<Q3K>>(x, y, n); }
float dot_q4_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<Q4K>(x, y, n); }
float dot_q5_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<RowDriver<Q5K>>(x, y, n); }
float dot_q6_k_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<RowDriver<Q6K>>(x, y, n); }
float dot_tq1_0_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<QuadDriver<Tq1>>(x, y, n); }
float dot_tq2_0_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<QuadDriver<Tq2>>(x, y, n); }
float dot_iq4_xs_q8_k(const std::byte* x, const std::byte* y, int64_t n) { return dot_one<TermsDriver<Iq4Xs>>(x, y, n); }

void matvec_q2_k_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  QuadDriver<Q2K>::matvec(x, rows, n, y, out);
}
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
void matvec_tq1_0_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  QuadDriver<Tq1>::matvec(x, rows, n, y, out);
}
void matvec_tq2_0_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  QuadDriver<Tq2>::matvec(x, rows, n, y, out);
}
void matvec_iq4_xs_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  TermsDriver<Iq4Xs>::matvec(x, rows, n, y, out);
}

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
