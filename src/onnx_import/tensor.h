// Private: constant tensors of an ONNX graph (initializers and Constant nodes) as plain
// vectors, with every size checked against the tensor's dims.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "fixq/tensor.h"

namespace fixq::onnx_import {

// Name -> tensor of every initializer and every Constant node's "value" in the graph.
std::map<std::string, const onnx::TensorProto*> graph_constants(const onnx::GraphProto& graph);

// The dims as a Shape; throws for negative extents or an element count beyond int64.
Shape tensor_shape(const onnx::TensorProto& t, const std::string& what);

// FLOAT, FLOAT16, BFLOAT16 and DOUBLE as float32 (float16 / bfloat16 exactly, double
// rounded; a finite double beyond the float range is an error); raw_data or the typed
// field, whichever holds the data. Other types and external data are refused.
std::vector<float> tensor_floats(const onnx::TensorProto& t, const std::string& what);

// INT64 and INT32 values (shape and axes operands).
std::vector<int64_t> tensor_ints(const onnx::TensorProto& t, const std::string& what);

}  // namespace fixq::onnx_import
