// fixq/tensor.h — shapes of the dense row-major tensors fixq reads and writes.
//
// fixq's array functions take a plain pointer plus a Shape (row-major, contiguous, last
// axis fastest). These helpers validate shapes once, so kernels can trust them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fixq {

using Shape = std::vector<int64_t>;

// Number of elements; throws fixq::Error for a negative extent or an element count that
// does not fit in int64. A shape of rank 0 is a scalar (one element).
int64_t numel(const Shape& shape);

// "[2, 3, 4]", for error messages.
std::string shape_str(const Shape& shape);

// Normalizes a possibly negative axis (-1 = last) against rank; throws if out of range.
int normalize_axis(int axis, int rank);

// Splits shape around axis into (outer, axis extent, inner): element (o, a, i) sits at
// flat index (o * extent + a) * inner + i.
struct AxisSplit {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, int axis);

}  // namespace fixq
