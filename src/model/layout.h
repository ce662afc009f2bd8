// Private: graph inputs and outputs between their external layouts (fixq/model.h
// ValueLayout) and the internal [B, T, C] / [S, B, H] arrays every operator reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fixq/model.h"

namespace fixq::model_detail {

// B and T of a Sequence array of shape `shape` in layout `axes` with C features; throws
// fixq::Error naming `what` for a rank or feature count that does not fit.
struct SeqDims {
  int64_t B = 0, T = 0;
};
SeqDims sequence_dims(const ModelValue& v, const Shape& shape, const std::string& what);

// The external shape of a Sequence of B x T frames, or of a State for batch B.
Shape external_shape(const ModelValue& v, int64_t B, int64_t T);

// An external array into internal order ([B, T, C] for a Sequence, as is for a State), and
// back. T is the external array's; the element type is any (float, int32).
template <class E>
std::vector<E> to_internal(const ModelValue& v, const std::vector<E>& data, int64_t B, int64_t T);
template <class E>
std::vector<E> to_external(const ModelValue& v, const std::vector<E>& data, int64_t B, int64_t T);

// A graph input or output's name for messages: "model input 'x'".
std::string input_name(const ModelValue& v);

}  // namespace fixq::model_detail
