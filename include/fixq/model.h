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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fixq/arith.h"
#include "fixq/calib.h"
#include "fixq/gru.h"
#include "fixq/gru_ptq.h"
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
//   Sequence outputs only: "BC", the last frame of each sequence, [B, C] (frame T - 1; a
//   keyword spotter's h_n[-1] -> Gemm -> Softmax). Every frame is still computed; a stream's
//   step gives the current frame, as for any Sequence output (docs/spec.md 10.1).
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

// ---- running a model (src/model/) ------------------------------------------------------

// A graph input or output as its users hold it: the array in the value's external layout
// (ValueLayout: "BTC" [B, T, C], "TBC" [T, B, C], "BCT" [B, C, T], "TC" [T, C], an output's
// "BC" [B, C] (its last frame; T >= 1); a State
// "SBH" [S, B, H]), float32, row-major. An empty ModelArray (no shape, no data) given for a
// State input means zeros (no initial state), as an absent ONNX initial_h.
struct ModelArray {
  Shape shape;
  std::vector<float> data;
};

// The float reference over whole sequences. inputs: one per graph input, in
// Model::inputs' order; every Sequence input has the same B and T. Returns one array per
// graph output, in Model::outputs' order and their layouts. The model is validated first.
// Throws fixq::Error naming the input for a wrong shape or a NaN / Inf element.
// Arithmetic: float32, one fixed order per operator (docs/spec.md "Whole models"):
// Linear and Conv1d sum b + w_0 x_0 + w_1 x_1 + ... left to right, each product and sum
// rounded; Tanh and Sigmoid are the GRU's own (fixq/gru.h); Softmax subtracts the frame's
// max, exponentiates with the GRU's exp, sums left to right and divides.
std::vector<ModelArray> model_forward(const Model& model, const std::vector<ModelArray>& inputs);

// Where every value of a float forward is observed (calibration): called once per node
// output and graph input with its values, [B, T, C] for a Sequence, [S, B, H] for a State.
struct ModelTap {
  std::function<void(int value, const float* data, const Shape& shape)> on_value;
  // Called with a Gru node's float input sequence x [B, T, C] and its initial state
  // ([S, B, H], or null for zeros), before the GRU runs.
  std::function<void(int node, const float* x, const Shape& x_shape, const float* h0)> on_gru_input;
};
std::vector<ModelArray> model_forward(const Model& model, const std::vector<ModelArray>& inputs, const ModelTap& tap);

// Float streaming, one frame per step(): each Sequence input's frame is [B, C] (whatever
// its layout: one time step of it); State inputs are given once, to the constructor
// (empty = zeros). step() returns every graph output's frame: [B, C] for a Sequence, the
// current [S, B, H] for a State. The stream carries every GRU's state and every Conv1d's
// last (kernel - 1) * dilation input frames; its frames equal model_forward's, bit for bit.
// A model with a bidirectional GRU is refused (its reverse direction needs the whole
// sequence). The model must outlive the stream and stay unchanged.
class ModelStream {
 public:
  ModelStream(const Model& model, int64_t batch, const std::vector<ModelArray>& initial_states = {});
  ~ModelStream();
  ModelStream(ModelStream&&) noexcept;
  ModelStream& operator=(ModelStream&&) noexcept;
  // frames: one per graph input in Model::inputs' order (State inputs' entries are ignored
  // and may be empty).
  std::vector<ModelArray> step(const std::vector<ModelArray>& frames);
  int64_t batch() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// How a model is quantized (docs/spec.md 10.2). preset "int8": 8-bit activations and
// weights; "int16": 16-bit activations, 8-bit weights (TFLite's 16x8); "auto": per operator
// 8 or 16 bits, the cheapest assignment found that reaches target_cosine on the
// calibration data (below). Weights are int8 in all three. Scales all powers of two or all
// fixed-point multipliers. GRUs run their own post-training quantization (GRU PTQ+
// defaults, fixq/gru_ptq.h) on their float inputs; every other operator gets the same
// three steps:
//   rounding          Linear and Conv1d weights rounded by GPTQ against their float inputs'
//                     second moments (each row keeps the better of GPTQ and nearest), or
//                     to nearest;
//   bias_correction   the weight rounding's expected output error, (W_q - W) E[x], taken
//                     off the bias (a Linear / Conv1d without one gets one);
//   range_search      every free range (graph inputs, Linear, Conv1d, Add, Mul, Concat
//                     outputs) chosen by the error of the model's outputs on the
//                     calibration data, starting from the observer's ranges; off, the
//                     observer's ranges are used as they are.
// auto: every operator starts at 8 bits; the operator whose promotion to 16 bits raises
// the least output cosine most per unit of work added is promoted, one at a time, until
// the target is met; then every promotion the target does not need is dropped again.
struct ModelQuantConfig {
  std::string preset = "int8";
  ScaleKind scales = ScaleKind::PowerOfTwo;
  ObserverConfig observer;  // per tensor: the ranges the search starts from
  WeightRounding rounding = WeightRounding::Gptq;
  bool bias_correction = true;
  bool range_search = true;
  int search_sweeps = 3;          // coordinate-descent passes over the ranges, at most (0: none)
  double target_cosine = 0.9999;  // auto: the least cosine of every output, in (0, 1]
  void validate() const;  // throws fixq::Error naming the field
};

// A graph input or output of a quantized model, in integers: the float array's layout and
// shape, values in [qmin, qmax] of `bits` (signed), under the value's parameters
// (ModelValueQuant). A State holds row s in row s's parameters.
struct ModelIntArray {
  Shape shape;
  int bits = 8;
  std::vector<int32_t> data;
};

// The quantization of one value: per tensor, asymmetric, q = sat(round_half_even(x / scale)
// + zero_point) into [qmin, qmax] of `bits`; x = (q - zero_point) * scale. A State value
// has one entry per row s (each GRU cell's h parameters), a Sequence one.
struct ModelValueQuant {
  std::string name;
  int bits = 8;
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int32_t qmin() const { return -(1 << (bits - 1)); }
  int32_t qmax() const { return (1 << (bits - 1)) - 1; }
};

// What a quantized model is, for the CLI, reports and code generators.
struct QuantizedModelInfo {
  std::string preset;
  ScaleKind scales = ScaleKind::PowerOfTwo;
  int gemm_bits = 8;  // the integers Linear and Conv1d run on (auto: 16 where any of theirs is 16-bit)
  int64_t work = 0;   // per frame and batch item: MACs and values, 16-bit ones twice (docs/spec.md 10.2)
  // From quantize() only (a loaded model has none): the least output cosine on the
  // calibration data, and per value how its range was chosen ("" where it is fixed).
  std::optional<double> calib_cosine;
  std::vector<std::string> range_choice;
  std::vector<ModelValueQuant> values;   // per value of the graph, Model::values' order
  std::vector<int> inputs, outputs;      // graph inputs and outputs, value indices
  struct Op {
    std::string name;                    // the node's name
    ModelOp op = ModelOp::Linear;
    int weight_bits = 0;                 // Linear, Conv1d: 8; Gru: its W bits; else 0
    int bits = 8;                        // its output's bits (a GRU's: its h bits)
    std::vector<int> inputs, outputs;    // value indices, as the node's
    std::string detail;                  // one line: scales, tables, the GRU's config
  };
  std::vector<Op> ops;
  // A table: one line per operator and per graph input and output.
  std::string to_string() const;
};

// The integer model. Built once; every method is const and uses per-call scratch, so one
// QuantizedModel may serve many threads and streams at once without locks.
class QuantizedModel {
 public:
  // Calibrates on the float reference over calib_batches (each a set of graph inputs as
  // model_forward takes), then builds every operator's integers (docs/spec.md "Whole
  // models"). Throws fixq::Error for an invalid model or config, or no batches.
  static QuantizedModel quantize(const Model& model, const std::vector<std::vector<ModelArray>>& calib_batches,
                                 const ModelQuantConfig& config);
  ~QuantizedModel();
  QuantizedModel(QuantizedModel&&) noexcept;
  QuantizedModel& operator=(QuantizedModel&&) noexcept;

  // Quantizes the float inputs with their parameters (NaN / Inf: a fixq::Error naming the
  // input), runs the integer graph, dequantizes the outputs. Shapes as model_forward.
  std::vector<ModelArray> forward(const std::vector<ModelArray>& inputs) const;
  // The integer graph alone: integer inputs (each in its value's parameters and bits; an
  // empty array for a State input means real 0) to integer outputs.
  std::vector<ModelIntArray> forward_raw(const std::vector<ModelIntArray>& inputs) const;

  QuantizedModelInfo info() const;
  // The graph as it was quantized (weights float, as given).
  const Model& model() const;

  // The file: safetensors, "fixq.format": "model-quantized", "fixq.version": "1" (int8,
  // int16) or "2" (auto: every value's bits its own; docs/spec.md 10.6); the graph
  // and every value's parameters as JSON in the metadata, every integer weight, bias,
  // scale and table as a tensor. load() refuses every corrupt or truncated file with one
  // fixq::Error naming it.
  void save(const std::string& path) const;
  static QuantizedModel load(const std::string& path);

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit QuantizedModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Integer streaming: as ModelStream, in the quantized model's integers; a sequence of
// step()s equals QuantizedModel::forward / forward_raw over the whole sequence bit for
// bit. The model must outlive the stream. A stream is used by one thread at a time.
class QuantizedModelStream {
 public:
  QuantizedModelStream(const QuantizedModel& model, int64_t batch, const std::vector<ModelArray>& initial_states = {});
  ~QuantizedModelStream();
  QuantizedModelStream(QuantizedModelStream&&) noexcept;
  QuantizedModelStream& operator=(QuantizedModelStream&&) noexcept;
  // Float frames quantized, dequantized outputs (as forward).
  std::vector<ModelArray> step(const std::vector<ModelArray>& frames);
  // Integer frames to integer outputs (as forward_raw).
  std::vector<ModelIntArray> step_raw(const std::vector<ModelIntArray>& frames);
  int64_t batch() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
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
