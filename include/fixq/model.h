// fixq/model.h — whole models: a graph of operators over streams of frames, the layers
// around the GRU (Linear, causal Conv1d, element-wise operators, Concat, Slice, Softmax)
// as one float model, the reference its integer form is calibrated on and measured against
// (docs/spec.md part 10).
//
// Values. Every value of the graph is one of two kinds:
//   Sequence  frames [B, T, C]: batch, time, features. Every operator but the GRU's state
//             works frame by frame on the feature axis C, except Conv1d, which reads its
//             input's last (kernel - 1) * dilation frames too (causal: frame t depends on
//             frames <= t only), and the GRU, which carries its state.
//   State     a GRU's state [S, B, H] (S = layers * directions): an initial state input
//             (ONNX initial_h) or a final state output (ONNX Y_h), only ever a graph input
//             or output and a GRU's operand.
// The external layout of each graph input and output (the axis order of the array the
// user has, as in the source ONNX file) is kept on its value, so that a model runs on the
// arrays its users feed the original: ValueLayout.
//
// Operators (ModelOp), on the feature axis of Sequence values, float32 semantics:
//   Linear   y = W x + b                      W [N, K], b [N] or none
//   Conv1d   y_t[o] = b[o] + sum_{i in group(o), j < k} W[o, i, j] x_{t - (k-1-j) d}[i]
//            W [Cout, Cin / groups, k]; x_s = 0 for s < 0 (the causal left padding);
//            stride 1, so T is kept
//   Gru      the float GRU of fixq/gru.h (either cell); inputs x and an optional initial
//            state, outputs y [B, T, D*H] and an optional final state
//   Add, Mul x + y, x * y (same C; Mul is the GLU's gate)
//   Tanh, Sigmoid, Relu
//   Concat   features of each input in order (same B, T)
//   Slice    features [begin, end)
//   Softmax  over the features of each frame
// Nodes are kept in a topological order; validate() proves it and every shape.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fixq/gru.h"
#include "fixq/tensor.h"

namespace fixq {

enum class ModelOp { Linear, Conv1d, Gru, Add, Mul, Tanh, Sigmoid, Relu, Concat, Slice, Softmax };
// "linear", "conv1d", "gru", "add", "mul", "tanh", "sigmoid", "relu", "concat", "slice",
// "softmax": the one spelling of the API, the files and the messages.
std::string to_string(ModelOp op);
// The inverse; throws fixq::Error naming every operator for any other name.
ModelOp parse_model_op(const std::string& name);

enum class ValueKind { Sequence, State };

// How a graph input's or output's array is laid out outside fixq: the order of its axes.
//   Sequence values: "BTC" (batch_first), "TBC" (time-major, as nn.GRU's default),
//   "BCT" (channels first, as nn.Conv1d's), "TC" (no batch axis, B = 1);
//   State values: "SBH" (ONNX initial_h / Y_h and torch's h_n).
// Internal values are always [B, T, C] (or [S, B, H]) and have no external layout.
struct ValueLayout {
  std::string axes = "BTC";
  // Whether axes is one of the spellings above for a value of this kind.
  static bool valid(const std::string& axes, ValueKind kind);
};

struct ModelValue {
  std::string name;  // as in the source graph (ONNX tensor name), unique in the model
  ValueKind kind = ValueKind::Sequence;
  int64_t features = 0;  // C; for a State, H
  int64_t rows = 0;      // a State's S (layers * directions); 0 for a Sequence
  ValueLayout layout;    // graph inputs and outputs only
};

struct ModelNode {
  std::string name;  // the source node's name (for messages), unique in the model
  ModelOp op = ModelOp::Linear;
  // Value indices. Gru: {x, initial state or -1}; outputs {y, final state or -1}.
  // Every other operator: every input present, one output.
  std::vector<int> inputs;
  std::vector<int> outputs;

  // Linear: weight [out_features, in_features] row-major, bias [out_features] or empty.
  // Conv1d: weight [out_features, in_features / groups, kernel], bias [out_features] or empty.
  std::vector<float> weight, bias;
  int64_t in_features = 0, out_features = 0;
  int64_t kernel = 1, dilation = 1, groups = 1;  // Conv1d
  int64_t begin = 0, end = 0;                    // Slice: features [begin, end)
  std::shared_ptr<const GruModel> gru;           // Gru
};

struct Model {
  std::vector<ModelValue> values;
  std::vector<ModelNode> nodes;  // topological order
  std::vector<int> inputs;       // graph inputs, value indices, in the source's order
  std::vector<int> outputs;      // graph outputs, likewise

  // Throws fixq::Error naming the node or value unless: every index is in range; every value
  // is produced by exactly one node or is a graph input, and no graph input is produced;
  // nodes consume only values produced before them (no cycle, nothing dangling); every
  // operator's operand kinds, feature counts, weight and bias sizes and attributes agree
  // (kernel, dilation, groups >= 1 and groups divides both channel counts, 0 <= begin < end
  // <= C); every weight is finite; names are unique; layouts are valid for their kinds.
  void validate() const;
  // The index of the value named `name`, or -1.
  int find_value(const std::string& name) const;
};

// From an ONNX model as torch.onnx.export (opsets 11-17, dynamic batch and time axes) or
// tf2onnx writes it: Gemm, MatMul + Add, Conv (1-D, stride 1, made causal by a Pad before it
// or by its pads followed by a Slice), GRU (both cells, layout 0 and 1, initial_h, Y_h), Add,
// Mul, Tanh, Sigmoid, Relu, Concat, Split, Slice and Softmax on the feature axis; the layout
// operators around them (Transpose, Reshape, Squeeze, Unsqueeze, Identity, constant
// Shape/Gather/Cast chains) are folded into the values' layouts. Anything else fails with one
// line naming the node, its op type and what fixq supports. Throws when fixq was built
// without ONNX support.
Model load_model_onnx(const std::string& path);

}  // namespace fixq
