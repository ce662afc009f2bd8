// Private: graph inputs and outputs of a quantized model between floats and integers.
#pragma once

#include <string>

#include "fixq/model.h"
#include "model/quantized.h"

namespace fixq::model_detail {

// a quantized with value v's parameters (row by row for a State of batch B): round half
// to even, saturate; a NaN / Inf element is a fixq::Error naming `what` and its index.
ModelIntArray quantize_array(const QuantizedModel::Impl& m, int v, const ModelArray& a, int64_t B, const std::string& what);
// The inverse: (q - zero point) * scale in float32.
ModelArray dequantize_array(const QuantizedModel::Impl& m, int v, const ModelIntArray& a, int64_t B);
// Throws unless a's bits are v's and every element lies in their range.
void check_int_values(const QuantizedModel::Impl& m, int v, const ModelIntArray& a, const std::string& what);

}  // namespace fixq::model_detail
