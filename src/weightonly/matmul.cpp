// weight_only_matmul: argument checks, act-order gathering of x's columns into the
// canonical row order, and dispatch to the active instruction set's kernel.
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/weightonly.h"
#include "weightonly/layout.h"

namespace fixq {

void weight_only_matmul(const float* x, int64_t m, const PackedWeights& w, float* y) {
  require(m >= 0, "weight_only_matmul: negative row count ", m);
  if (m == 0) return;
  require(x != nullptr && y != nullptr, "weight_only_matmul: null data pointer");
  const weightonly_detail::View v = weightonly_detail::Access::view(w);
  const weightonly_detail::MatmulKernel kernel = weightonly_detail::registry().pick([](const weightonly_detail::PackedKernels& k) { return k.matmul; }).kernel;
  const std::vector<int32_t>& perm = weightonly_detail::Access::perm(w);
  if (perm.empty()) {
    kernel(x, m, v, y);
    return;
  }
  std::vector<float> xp(static_cast<size_t>(m * v.k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t r = 0; r < v.k; ++r) xp[static_cast<size_t>(i * v.k + r)] = x[i * v.k + perm[static_cast<size_t>(r)]];
  kernel(xp.data(), m, v, y);
}

}  // namespace fixq
