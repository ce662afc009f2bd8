// time_major_items (fixq/gru.h): batches of sequences out of a larger tensor, either layout.
#include "fixq/error.h"
#include "fixq/gru.h"

namespace fixq {

std::vector<float> time_major_items(const float* x, const Shape& x_shape, bool batch_first, int64_t b0, int64_t b1) {
  require(x_shape.size() == 3, "sequences must be 3-D ", batch_first ? "[B, T, C]" : "[T, B, C]", ", got ",
          shape_str(x_shape));
  const int64_t T = batch_first ? x_shape[1] : x_shape[0], B = batch_first ? x_shape[0] : x_shape[1], C = x_shape[2];
  require(0 <= b0 && b0 <= b1 && b1 <= B, "sequences [", b0, ", ", b1, ") are not within the ", B, " sequences");
  numel(x_shape);  // validates the extents
  std::vector<float> out;
  out.reserve(static_cast<size_t>(T * (b1 - b0) * C));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = b0; b < b1; ++b) {
      const float* row = x + (batch_first ? b * T + t : t * B + b) * C;
      out.insert(out.end(), row, row + C);
    }
  return out;
}

}  // namespace fixq
