// The float GRU's reference kernels: the definitions of gru/float/kernels.h, one float at a
// time. Every vector family must give these bits. std::fma is IEEE's fusedMultiplyAdd (one
// rounding, exact otherwise, in hardware or in libm's software), so the reference needs no
// FMA instruction to define what the vector FMAs compute.
#include <algorithm>
#include <cmath>

#include "gru/float/kernels.h"
#include "gru/float/math.h"

namespace fixq::gru_float {

namespace {

// dot_fma_chains of x with w[0], w[stride], w[2 stride], ...
float strided_dot(const float* w, int64_t stride, const float* x, int64_t k) {
  float s = 0.0f;
  for (int64_t b = 0; b < k; b += kFmaChain) {
    float c = 0.0f;
    for (int64_t i = b; i < std::min(k, b + kFmaChain); ++i) c = std::fma(w[i * stride], x[i], c);
    s = b == 0 ? c : s + c;
  }
  return s;
}

}  // namespace

float dot_fma_chains(const float* w, const float* x, int64_t k) { return strided_dot(w, 1, x, k); }

namespace scalar {
namespace {

void pack(const float* w, int64_t n, int64_t k, float* packed) {
  for (int64_t p = 0; p * kPanel < n; ++p)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t c = 0; c < kPanel; ++c) {
        const int64_t row = p * kPanel + c;
        packed[(p * k + i) * kPanel + c] = row < n ? w[row * k + i] : 0.0f;
      }
}

// The definition: the column order, a matter of cache only, is the vector kernels' own.
void matmul(const float* a, int64_t lda, int64_t m, const float* packed, int64_t n, int64_t k, float* out,
            int64_t ldo, bool /*reverse_columns*/) {
  // k = 0: every dot is the empty chain's +0, and `packed` may be null (no offset from it then).
  const bool empty = k == 0;
  for (int64_t i = 0; i < m && empty; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * ldo + j] = 0.0f;
  for (int64_t i = 0; i < m && !empty; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * ldo + j] = strided_dot(packed + (j / kPanel) * k * kPanel + j % kPanel, kPanel, a + i * lda, k);
}

void gates(const GateArgs& g) {
  const ScalarOps o;
  const int64_t H = g.H;
  for_each_gate_row(g, [&](const float* wx, const float* rh, float* h, int64_t b) {
    for (int64_t j = 0; j < H; ++j) {
      const UnitValues<ScalarOps> u =
          unit_update(o, wx[j], wx[H + j], wx[2 * H + j], rh[j], rh[H + j], rh[2 * H + j], g.bx[j], g.bx[H + j],
                      g.bx[2 * H + j], g.br[j], g.br[H + j], g.br[2 * H + j], h[j]);
      h[j] = u.h;
      if (g.all) each_gate_intermediate(u, [&](int op, float v) { g.all[op][b * H + j] = v; });
    }
  });
}

}  // namespace

FIXQ_KERNEL_TABLE(FloatKernels, kFloat, Isa::Scalar){"scalar", matmul, pack, gates};

}  // namespace scalar
}  // namespace fixq::gru_float
