// The float GRU's reference kernels: the definitions of gru/float/kernels.h, one float at a
// time. Every vector family must give these bits.
#include "gru/float/kernels.h"
#include "gru/float/math.h"

namespace fixq::gru_float {

float dot16(const float* w, const float* x, int64_t k) {
  float p[16] = {};
  int64_t i = 0;
  for (; i + 16 <= k; i += 16)
    for (int l = 0; l < 16; ++l) p[l] = p[l] + w[i + l] * x[i + l];
  for (int l = 0; i + l < k; ++l) p[l] = p[l] + w[i + l] * x[i + l];
  for (int half = 8; half >= 1; half /= 2)
    for (int l = 0; l < half; ++l) p[l] = p[l] + p[l + half];
  return p[0];
}

namespace scalar {
namespace {

void matmul_nt(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k, float* out,
               int64_t ldo) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * ldo + j] = dot16(w + j * k, a + i * lda, k);
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

FIXQ_KERNEL_TABLE(FloatKernels, kFloat, Isa::Scalar){"scalar", matmul_nt, gates};

}  // namespace scalar
}  // namespace fixq::gru_float
