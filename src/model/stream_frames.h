// Private: the shape of one streamed frame of a Sequence input, [B, C] in every layout ([C]
// also accepted for a "TC" input, whose B is 1). Shared by the float and integer streams.
#pragma once

#include <string>

#include "fixq/error.h"
#include "fixq/model.h"

namespace fixq::model_detail {

inline void check_frame_shape(const ModelValue& v, const Shape& shape, size_t values, int64_t B, const std::string& what) {
  const bool ok = shape == Shape{B, v.features} || (v.layout.axes == "TC" && B == 1 && shape == Shape{v.features});
  require(ok, what, " must be [", B, ", ", v.features, "], got ", shape_str(shape));
  require(static_cast<int64_t>(values) == B * v.features, what, " has ", values, " values for ", B * v.features);
}

}  // namespace fixq::model_detail
