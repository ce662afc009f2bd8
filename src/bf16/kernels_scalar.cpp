// The scalar reference of the bf16 kernels: fixq/bf16.h's definitions, literally, one
// VDPBF16PS lane step (step.h) at a time.
#include <cstddef>

#include "bf16/kernels.h"
#include "bf16/step.h"

namespace fixq::bf16_detail::scalar {

namespace {

float dot(const uint16_t* a, const uint16_t* b, int64_t k) {
  float c[kDotLanes] = {};
  const int64_t pairs = (k + 1) / 2;
  const int64_t padded = (pairs + kDotLanes - 1) / kDotLanes * kDotLanes;
  for (int64_t p = 0; p < padded; ++p) {
    const uint32_t x = p < pairs ? pair_at(a, k, p) : 0u, y = p < pairs ? pair_at(b, k, p) : 0u;
    c[p % kDotLanes] = dp_step(c[p % kDotLanes], x, y);
  }
  for (int64_t half = kDotLanes / 2; half >= 1; half /= 2)
    for (int64_t l = 0; l < half; ++l) c[l] += c[l + half];
  return c[0];
}

void gemm(const uint16_t* a, int64_t m, int64_t lda, const uint32_t* packed, int64_t n, int64_t k, float* c,
          int64_t ldc) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t i = 0; i < m; ++i) {
    const uint16_t* row = a + static_cast<std::size_t>(i * lda);
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t* panel = packed + static_cast<std::size_t>(j / kPanel * pairs * kPanel + j % kPanel);
      float acc = 0.0f;
      for (int64_t p = 0; p < pairs; ++p) acc = dp_step(acc, pair_at(row, k, p), panel[p * kPanel]);
      c[static_cast<std::size_t>(i * ldc + j)] = acc;
    }
  }
}

}  // namespace

FIXQ_KERNEL_TABLE(Bf16Kernels, kBf16, Isa::Scalar){dot, gemm};

}  // namespace fixq::bf16_detail::scalar
