// fixq/tensor.h: shape arithmetic and checks shared by every module (a module of its own,
// not part of arith: nothing here is fixed-point arithmetic).
#include "fixq/tensor.h"

#include <limits>

#include "fixq/error.h"

namespace fixq {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    if (d < 0) fail("shape ", shape_str(shape), " has a negative extent at axis ", i);
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      fail("shape ", shape_str(shape), " has more elements than fit in int64");
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int normalize_axis(int axis, int rank) {
  require(rank > 0, "an axis was given for a rank-0 tensor");
  const int a = axis < 0 ? axis + rank : axis;
  require(a >= 0 && a < rank, "axis ", axis, " is out of range for a tensor of rank ", rank);
  return a;
}

AxisSplit split_at_axis(const Shape& shape, int axis) {
  const int a = normalize_axis(axis, static_cast<int>(shape.size()));
  numel(shape);  // no negative extent, and no product below can overflow
  AxisSplit s;
  for (int i = 0; i < a; ++i) s.outer *= shape[i];
  s.extent = shape[a];
  for (size_t i = a + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

}  // namespace fixq
