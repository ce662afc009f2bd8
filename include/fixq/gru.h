// fixq/gru.h — the float GRU: the reference the integer GRU is calibrated on and measured
// against (Haste / cuDNN / PyTorch semantics, docs/spec.md).
//
// Per direction of a layer, with gates in Haste order z, r, g (rows [0, H), [H, 2H),
// [2H, 3H) of W, R, bx, br):
//   Wx = W x,  Rh = R h
//   z  = sigmoid(Wx_z + Rh_z + bx_z + br_z)
//   r  = sigmoid(Wx_r + Rh_r + bx_r + br_r)
//   g  = tanh(Wx_g + r * (Rh_g + br_g) + bx_g)        (r only scales the recurrent part)
//   h' = z * h + (1 - z) * g
// This is exactly torch.nn.GRU (whose gate order is r, z, n; import reorders) and Haste: the
// reset-after cell. A model may instead be of the reset-before cell (GruCellKind below),
//   g  = tanh(Wx_g + R_g (r * h) + bx_g + br_g)       (r scales h before the product)
// z, r and h' unchanged (docs/spec.md 5.4 has its float and integer definitions).
//
// Tensors: input x [T, B, C] time-major (batch_first [B, T, C] as an option), output
// y [T, B, D*H] (D = 2 when bidirectional: forward then reverse halves), final state
// h_n [L*D, B, H] as PyTorch. Per-sequence lengths: steps t >= length of a batch item are
// padding; they are not computed, their outputs are left untouched (zero, as
// pad_packed_sequence pads), and that item's final state is its state after its last real
// step (the reverse direction starts at its last real step, as pack_padded_sequence does;
// an item of length 0 keeps h0).
//
// Arithmetic: float32, every operation rounded to nearest, in one fixed order whatever the
// CPU, so every machine and instruction set (scalar, AVX2, AVX-512) gives the same bits,
// and calibration the same .fixq bytes:
//  - a dot product sum_k w_k x_k runs one chain of fused multiply-adds (one rounding each,
//    IEEE fusedMultiplyAdd: std::fma in the scalar reference, vfmadd in the vector
//    kernels) per block of 32 consecutive k, c = fma(w_k, x_k, c) in increasing k from
//    c = +0; the blocks' chains are then added left to right;
//  - the sums above go left to right; two multiply-adds are fused, the candidate's
//    Wx_g + r * (Rh_g + br_g) (then + bx_g) and the new state's z * h + (1 - z) * g (the
//    product (1 - z) * g rounded first); every other operation is rounded on its own;
//  - sigmoid(v) = 1 / (1 + exp(-v)), with fixq's own exp (< 1.01 ulp) and tanh (< 1.5 ulp),
//    polynomials in float operations and fused multiply-adds (src/gru/float/math.h):
//    libm's differ between versions and CPUs.
// The results differ from PyTorch's (other summation orders, other exp) by rounding only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fixq/tensor.h"

namespace fixq {

// Every operator of the integer GRU's parameter table (docs/spec.md 3.2), each with its own
// quantization later.
enum class GruOp {
  X,           // input of the layer direction              [B, C]
  H,           // hidden state h_t as written (h_{t-1} is the step before, or h0)  [B, H]
  W,           // input weights                             [3H, C]
  R,           // recurrent weights                         [3H, H]
  Bx,          // input bias                                [3H]
  Br,          // recurrent bias                            [3H]
  Wx,          // W x (all three gates)                     [B, 3H]
  Rh,          // R h (all three gates)                     [B, 3H]
  ZPre,        // Wx_z + Rh_z + bx_z + br_z                 [B, H]
  RPre,        // Wx_r + Rh_r + bx_r + br_r                 [B, H]
  GPre,        // Wx_g + rRh + bx_g                         [B, H]
  ZOut,        // sigmoid(z_pre)                            [B, H]
  ROut,        // sigmoid(r_pre)                            [B, H]
  GOut,        // tanh(g_pre)                               [B, H]
  RhAddBr,     // Rh_g + br_g                               [B, H]
  RRh,         // r * Rh_add_br                             [B, H]
  OldContrib,  // z * h                                     [B, H]
  NewContrib,  // (1 - z) * g                               [B, H]
  Count
};
constexpr int kGruOpCount = static_cast<int>(GruOp::Count);

// "x", "h", "W", "R", "bx", "br", "Wx", "Rh", "z_pre", "r_pre", "g_pre", "z_out",
// "r_out", "g_out", "Rh_add_br", "rRh", "old_contrib", "new_contrib" (docs/spec.md 3.2).
std::string to_string(GruOp op);
// The inverse; throws fixq::Error naming the known operators for an unknown name.
GruOp parse_gru_op(const std::string& name);

// Which GRU cell a model is: where the reset gate r meets the state (docs/spec.md 5.4).
//   ResetAfter  (the default): g = tanh(Wx_g + bx_g + r * (R_g h + br_g)): torch.nn.GRU,
//               cuDNN, Haste, ONNX linear_before_reset = 1, Keras reset_after = True.
//   ResetBefore: g = tanh(Wx_g + bx_g + R_g (r * h) + br_g): ONNX's default
//               linear_before_reset = 0, Keras reset_after = False, TF1 GRUCell, RNNoise 2017.
// z, r and h' are the same in both; every cell of a model is of one kind.
enum class GruCellKind { ResetAfter, ResetBefore };
// "reset_after", "reset_before": the one spelling of the API, the files and Python.
std::string to_string(GruCellKind kind);
// The inverse; throws fixq::Error naming both for any other name (`what`: where it was read).
GruCellKind parse_gru_cell_kind(const std::string& name, const std::string& what = "GRU cell");
// Whether a cell of this kind computes op. The reset-before cell has no Rh_add_br and no
// rRh (its reset gate meets h before the product, docs/spec.md 5.4); their parameters are
// kept in the table, placeholders that nothing reads.
bool gru_op_used(GruOp op, GruCellKind kind);

// One direction of one layer, Haste gate order (z, r, g).
struct GruCell {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  std::vector<float> W;   // [3H, C]
  std::vector<float> R;   // [3H, H]
  std::vector<float> bx;  // [3H]
  std::vector<float> br;  // [3H]
};

struct GruModel {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  bool bidirectional = false;
  std::vector<GruCell> cells;  // [layer * D + direction]; layer l > 0 has input D*H
  GruCellKind cell_kind = GruCellKind::ResetAfter;  // of every cell

  int directions() const { return bidirectional ? 2 : 1; }
  const GruCell& cell(int layer, int direction) const { return cells[static_cast<size_t>(layer * directions() + direction)]; }
  // Throws fixq::Error unless every shape is consistent and every value finite.
  void validate() const;
};

// Where a per-operator value is observed during a float run (calibration, evaluation):
// called once per (layer, direction, time step, operator) with the [B', n] values of the
// batch items still running at that step (B' <= B; rows in batch order), in the order the
// computation produces them:
//   x, Wx, Rh, z_pre, z_out, r_pre, r_out, Rh_add_br, rRh, g_pre, g_out, old_contrib,
//   new_contrib, h
// (A reset-before model reports x, Wx, z_pre, z_out, r_pre, r_out, Rh, g_pre, g_out,
// old_contrib, new_contrib, h: its Rh's g rows are R_g (r * h), known only after r; it has
// no Rh_add_br or rRh.)
// Layers run in order, and within a layer the forward direction before the reverse one;
// steps are reported in processing order (the reverse direction runs t = T-1 .. 0). A step
// at which no item runs (every length <= t) is not reported. W, R, Bx and Br are
// parameters, never reported here.
struct GruTap {
  std::function<void(int layer, int direction, int64_t t, GruOp op, const float* values, const Shape& shape)> on_value;
};

// The smallest batch a forward splits over threads (GruRunOptions::threads), the threshold
// issue 33 names: smaller batches (batch 1 above all) stay on one thread, where a split
// has not been shown to pay.
inline constexpr int64_t kGruMinThreadedBatch = 16;
// The most GruRunOptions::threads may ask for (as FIXQ_NUM_THREADS): a larger count is a typo.
inline constexpr int kGruMaxThreads = 1024;

struct GruRunOptions {
  bool batch_first = false;
  std::span<const int64_t> lengths;  // empty: every sequence has length T; else B entries in [0, T]
  const float* h0 = nullptr;         // [L*D, B, H] initial state, or zeros when null
  const GruTap* tap = nullptr;       // optional observer of every operator value
  // Threads of a forward: from a batch of kGruMinThreadedBatch, the batch is cut into
  // contiguous slices, one per thread (at least one item each), each running the whole
  // forward on the process's shared worker threads, its products on its own thread. 0: the
  // process's thread count (set_gemm_threads, FIXQ_NUM_THREADS, else every hardware
  // thread). Results are bit-identical for every value. Smaller batches, and runs with a
  // tap (whose calls are ordered), are not split; an unsplit forward shares its large
  // products as set_gemm_threads says (fixq/gemm.h). Outside [0, kGruMaxThreads] is a
  // fixq::Error.
  int threads = 1;
};

struct GruOutput {
  std::vector<float> y;    // [T, B, D*H] ([B, T, D*H] when batch_first)
  std::vector<float> h_n;  // [L*D, B, H]
};

// Runs the float GRU over x of shape [T, B, C] ([B, T, C] when batch_first). Throws
// fixq::Error for a wrong input shape, NaN / Inf in x or h0, or lengths out of range.
GruOutput gru_forward(const GruModel& model, const float* x, const Shape& x_shape, const GruRunOptions& opt = {});

// The float GRU prepared for many forwards: the model validated once and its weights packed
// once into the kernels' layout, where gru_forward does both on every call (at H = 256,
// batch 1, 100 steps, 14% of the call). forward() is gru_forward's contract, results bit
// for bit equal, error messages naming FloatGru::forward. The object holds its own copy of
// the model; copies of it share the packed weights (never changed), and forward() may run
// on several threads at once. The kernels are those active when it is made.
class FloatGru {
 public:
  explicit FloatGru(GruModel model);  // throws fixq::Error as GruModel::validate
  GruOutput forward(const float* x, const Shape& x_shape, const GruRunOptions& opt = {}) const;
  // The same into out, whose storage is reused from call to call.
  void forward(const float* x, const Shape& x_shape, GruOutput& out, const GruRunOptions& opt = {}) const;
  const GruModel& model() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// Sequences [b0, b1) of x [T, B, C] ([B, T, C] when batch_first) as a time-major copy
// [T, b1 - b0, C]: how a file of many sequences is cut into batches (calibration,
// evaluation). Throws fixq::Error unless x_shape is 3-D and 0 <= b0 <= b1 <= B.
std::vector<float> time_major_items(const float* x, const Shape& x_shape, bool batch_first, int64_t b0, int64_t b1);

// Streaming: one frame at a time for a unidirectional model (a bidirectional one needs
// the whole sequence and is rejected). step(x [B, C]) advances every layer by one time
// step and returns the top layer's h [B, H]; the sequence of steps equals gru_forward bit
// for bit. The model is validated once, here, and must outlive the stream and stay as it
// was: the stream keeps the weights in its kernels' layout, made here once rather than on
// every step. batch >= 1, h0 is [L, B, H] (zeros when null). NaN / Inf in h0 or x is a
// fixq::Error. A stream is used by one thread at a time; streams of one model (copies, or
// streams made from it) run on several threads at once.
class GruStream {
 public:
  GruStream(const GruModel& model, int64_t batch, const float* h0 = nullptr);
  std::vector<float> step(const float* x);
  // The same into h_out [B, H]: a step that allocates nothing once the first has run.
  void step(const float* x, float* h_out);
  const std::vector<float>& state() const { return h_; }  // [L, B, H]

 private:
  struct Packed;  // W and R of every layer in the kernels' layout (src/gru/float/stream.cpp)
  const GruModel* model_;
  int64_t batch_;
  std::vector<float> h_;
  std::shared_ptr<const Packed> packed_;  // shared by copies of the stream: never changed
  std::vector<float> wx_, rh_;            // a step's products, kept to reuse their memory
  bool last_reversed_ = true;  // the last step read the weights last to first (the first reads them in order)
};

// ---- import ----------------------------------------------------------------------------

// A named float tensor, as read from a checkpoint.
struct NamedTensor {
  std::string name;
  Shape shape;
  std::vector<float> data;
};

// From a PyTorch nn.GRU state_dict: weight_ih_l{k}[_reverse] [3H, C] and weight_hh_l{k}
// [3H, H] with gates in r, z, n order, bias_ih_l{k} / bias_hh_l{k} [3H] (absent biases
// are zero, as bias=False). Shapes decide C, H, L and D; every inconsistency or missing
// tensor is a fixq::Error naming it.
GruModel gru_from_torch(const std::vector<NamedTensor>& state_dict);

// The inverse: the model as an nn.GRU state_dict (torch's names and gate order, every
// bias present), in torch's order (layer by layer, weight_ih, weight_hh, bias_ih,
// bias_hh, the reverse direction after the forward one).
std::vector<NamedTensor> gru_to_torch(const GruModel& model);

// From Haste's layout for one layer and direction: kernel [C, 3H], recurrent_kernel
// [H, 3H], bias [3H], recurrent_bias [3H], gates z, r, g (columns).
GruCell gru_cell_from_haste(const NamedTensor& kernel, const NamedTensor& recurrent_kernel,
                            const NamedTensor& bias, const NamedTensor& recurrent_bias);

// Reads a float GRU from the files users have; the format is told by the content:
//  - fixq's float model file: a safetensors file holding an nn.GRU state_dict (F32) and,
//    in its __metadata__, "fixq.format": "gru-float", "input_size", "hidden_size",
//    "num_layers" (decimal) and "bidirectional" ("true" / "false"), written by
//    tools/export_gru.py or save_gru_float. The metadata must agree with the tensors, and
//    every tensor must belong to the GRU.
//  - any other safetensors file holding a state_dict (safetensors.torch.save_file(
//    model.state_dict(), ...)): the GRU's tensors are those named <prefix>weight_ih_l<k>
//    [_reverse], <prefix>weight_hh_l<k>, <prefix>bias_ih_l<k>, <prefix>bias_hh_l<k> whose
//    weight_hh_l0 is [3H, H] (an nn.LSTM's is [4H, H], an nn.RNN's [H, H]); sizes, layers,
//    direction and bias follow from names and shapes, checked against each other (biases
//    are all present or all absent, as nn.GRU's bias flag makes them). `prefix` ("encoder.
//    rnn." or "encoder.rnn") picks one GRU of a whole model's checkpoint; an empty prefix
//    takes the only GRU in the file, and when there are several the error lists them.
//    Other tensors are left alone.
//  - an ONNX model (load_gru_onnx below).
// Safetensors files may hold F32, F16, BF16 or F64 tensors (converted as
// SafetensorsFile::read_f32). Every error names the file.
GruModel load_gru_float(const std::string& path, const std::string& prefix = "");

// From an ONNX model (ModelProto, as torch.onnx.export writes it): the GRU nodes (ONNX
// gate order z, r, h, which is fixq's; W [D, 3H, C], R [D, 3H, H], B [D, 6H] = Wb then
// Rb) with linear_before_reset = 1, the PyTorch / cuDNN cell, or 0 (ONNX's default, as tf2onnx
// writes Keras and TF GRUs), the reset-before cell (GruModel::cell_kind); every node of a
// chain must be of one kind. torch writes one GRU node per
// layer, each fed from the one before through Squeeze (one direction) or Transpose
// [0, 2, 1, 3] + Reshape to [T, B, D*H] (two); such a chain is one multi-layer model.
// `prefix` picks a chain by its first node's name, either as torch names modules
// ("encoder.rnn." matches node "/encoder/rnn/GRU") or as a plain node-name prefix; empty
// takes the only chain and lists them when there are several. initial_h and
// sequence_lens inputs are not part of the model (h0 and lengths are run-time arguments).
// Refused with a fixq::Error that says why: linear_before_reset other than 0 or 1, nodes of
// both cells in one chain, direction "reverse" alone, activations other
// than Sigmoid / Tanh, clip, layout = 1, weights that are not constants of the graph,
// external data. Throws when fixq was built without ONNX support (FIXQ_ONNX=OFF).
GruModel load_gru_onnx(const std::string& path, const std::string& prefix = "");
// Whether this build reads ONNX (Debian's libonnx-dev and libprotobuf-dev at build time).
bool onnx_supported();

void save_gru_float(const std::string& path, const GruModel& model);

}  // namespace fixq
