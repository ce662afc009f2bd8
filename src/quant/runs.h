// Private: walks a tensor as contiguous runs that share their quantization parameters.
#pragma once

#include <cstdint>

#include "fixq/quant.h"

namespace fixq::quant_detail {

// Calls f(offset, length, param_offset, per_element) for consecutive runs that cover the
// tensor in memory order. per_element == false: the whole run uses parameter slot
// param_offset; per_element == true: element offset + i uses slot param_offset + i.
// The scheme must already be validated for the shape.
template <class F>
void for_each_run(const QuantScheme& s, const Shape& shape, F&& f) {
  const int64_t n = numel(shape);
  switch (s.granularity) {
    case Granularity::PerTensor:
      f(int64_t{0}, n, int64_t{0}, false);
      return;
    case Granularity::PerToken: {
      const int64_t row = shape.back();
      for (int64_t r = 0; r * row < n; ++r) f(r * row, row, r, false);
      return;
    }
    case Granularity::PerChannel: {
      const AxisSplit a = split_at_axis(shape, s.axis);
      for (int64_t o = 0; o < a.outer; ++o) {
        if (a.inner == 1) {
          f(o * a.extent, a.extent, int64_t{0}, true);
        } else {
          for (int64_t c = 0; c < a.extent; ++c) f((o * a.extent + c) * a.inner, a.inner, c, false);
        }
      }
      return;
    }
    case Granularity::PerGroup: {
      const AxisSplit a = split_at_axis(shape, s.axis);
      const int64_t groups = a.extent / s.group_size;
      for (int64_t o = 0; o < a.outer; ++o) {
        if (a.inner == 1) {
          for (int64_t g = 0; g < groups; ++g)
            f((o * a.extent + g * s.group_size), s.group_size, o * groups + g, false);
        } else {
          for (int64_t c = 0; c < a.extent; ++c)
            f((o * a.extent + c) * a.inner, a.inner, (o * groups + c / s.group_size) * a.inner, true);
        }
      }
      return;
    }
  }
}

}  // namespace fixq::quant_detail
