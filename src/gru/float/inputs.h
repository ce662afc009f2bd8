// Private: checks of the values a float GRU run is given.
#pragma once

#include "fixq/tensor.h"

namespace fixq::gru_float {

// Whether none of the n values is NaN or infinite (a branch-free scan that vectorises).
bool all_finite(const float* v, int64_t n);

// Throws fixq::Error "<who>: <what>[i, j, ...] = nan is not finite" for the first NaN or
// infinity in the array v of the given shape (nothing to check when it has no elements).
void require_finite(const char* who, const char* what, const float* v, const Shape& shape);

}  // namespace fixq::gru_float
