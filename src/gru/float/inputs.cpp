// Finite-value checks of GRU inputs, naming the first bad element by its coordinates.
#include "gru/float/inputs.h"

#include <cmath>
#include <cstdint>

#include "fixq/error.h"
#include "quant/kernels.h"

namespace fixq::gru_float {

bool all_finite(const float* v, int64_t n) { return quant_detail::first_non_finite(v, n) < 0; }

void require_finite(const char* who, const char* what, const float* v, const Shape& shape) {
  const int64_t n = numel(shape);
  if (all_finite(v, n)) return;
  for (int64_t e = 0; e < n; ++e) {
    if (std::isfinite(v[e])) continue;
    Shape index(shape.size());
    for (int64_t rest = e, a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
      index[a] = rest % shape[a];
      rest /= shape[a];
    }
    fail(who, ": ", what, shape_str(index), " = ", v[e], " is not finite");
  }
}

}  // namespace fixq::gru_float
