// Private: the integer model behind QuantizedModel (fixq/model.h): every value's
// parameters, every node's integer constants, and the one integer graph executor that
// forward, forward_raw and the streams share (docs/spec.md part 10).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cpu/aligned_vector.h"
#include "fixq/arith.h"
#include "fixq/gemm.h"
#include "fixq/model.h"
#include "fixq/qgru.h"
#include "fixq/quant.h"

namespace fixq::model_detail {

// An integer map of one 8-bit value evaluated once for every value of its range [qmin, ...].
struct Table8 {
  int32_t qmin = 0;
  std::vector<int32_t> y;  // by q - qmin
  // y as 256 bytes where it has 256 entries, each in int8's range (else empty): the table a
  // family with byte tables holds in registers (model/kernels.h).
  cpu::AlignedVector<int8_t> bytes;
  bool empty() const { return y.empty(); }
  int32_t operator()(int32_t q) const { return y[static_cast<size_t>(q - qmin)]; }
};

// The integer constants of one node. Only the fields of its operator are set.
struct QNode {
  // Linear, Conv1d: weights int8 symmetric per output channel o ([N, K] or
  // [Cout, Cin / groups, kernel]), w_scale[o] = S_w[o]; bias int32 at S_x * S_w[o];
  // requant[o] = S_x * S_w[o] / S_y.
  std::vector<int32_t> q_w;
  std::vector<float> w_scale;
  std::vector<int32_t> q_b;
  std::vector<FixedPointScale> requant;
  // packed[g]: group g's weights as the GEMM reads them, columns tap-major (im2col's
  // order, int_ops.h: prepare_conv).
  std::vector<PackedB> packed;
  // The epilogue's lane form (model/kernels.h), where every output has one: per group g,
  // entries [g * stride, g * stride + Cout / groups) of offset (bias - zp_x
  // colsum), m, left and right, padded to whole blocks of 16 lanes. Empty: none (the
  // element loop of gemm_requant's formula).
  struct Lanes {
    bool pow2 = true;
    int64_t stride = 0;
    std::vector<int32_t> offset, m, left, right;
    bool empty() const { return offset.empty(); }
  } lanes;
  // Tanh, Sigmoid: the table from the input's parameters to the output's.
  std::optional<ActivationLut> lut;
  // Add, Mul.
  QuantizedAdd add;
  QuantizedMul mul;
  // Concat: each input into the output's parameters; copy[i] where they are equal.
  std::vector<Rescale> rescale;
  std::vector<bool> copy;
  // Softmax: exp_table[d] = round_half_even(2^30 exp(-d S_x)) for d = max - q below its
  // size (0 beyond); out_frac = 8 (int8: scale 2^-8, zero point -128) or 15 (int16: 2^-15, 0).
  std::vector<int32_t> exp_table;
  int out_frac = 8;
  // Gru: the integer GRU; its input from the producer's parameters (x_copy: equal), the
  // reverse direction's h into the output's (the forward top cell's h) parameters.
  std::shared_ptr<const QuantizedGru> gru;
  Rescale x_in, reverse_to_y;
  bool x_copy = true, reverse_copy = true;
  // Per input, where the input value is 8-bit: the node's per-element integer map (Tanh /
  // Sigmoid's table, a Concat input's or a GRU input's rescale) as a Table8, the same
  // integers read instead of recomputed per element (a Rescale is two 64-bit products and a
  // clamp). Empty: none, a copy, or not 8-bit.
  std::vector<Table8> table8;
};

struct ModelIntState;  // a stream's carried integers (int_graph.cpp)

}  // namespace fixq::model_detail

namespace fixq {

struct QuantizedModel::Impl {
  Model model;
  std::string preset = "int8";
  ScaleKind scales = ScaleKind::PowerOfTwo;
  int bits = 8;  // int8, int16: every activation; auto: the GEMMs' integers (quant_state.h, model_gemm_bits)
  std::vector<ModelValueQuant> vq;  // per value
  std::vector<model_detail::QNode> qn;  // per node
  // From quantize() only (not in the file): how each value's range was chosen, and the
  // least output cosine on the calibration data.
  std::vector<std::string> range_choice;
  std::optional<double> calib_cosine;

  // The parameters of value v (row `row` of a State) as QuantParams of `bits` bits.
  QuantParams params(int v, size_t row = 0) const;
  // Every derived constant (requantization scales, rescales, packed weights) from vq, the
  // integer weights and the tables: those of `tables` (from a file, per node: the
  // activation table or the softmax exp table) or, when null, built now.
  void assemble(const std::vector<std::vector<int32_t>>* tables);
};

}  // namespace fixq

namespace fixq::model_detail {

// The per-stream (or per-call) carried integers: every Conv1d's last P input frames and
// every GRU's state per cell in its h storage.
struct ModelIntState {
  std::vector<std::vector<int32_t>> conv_hist;          // per node [B, P, Cin]
  std::vector<std::vector<std::vector<char>>> gru_state;  // per node, per cell [B, H]
};

// The integer graph over vals (int32 per value: Sequence [B, T, C], State [S, B, H];
// graph inputs filled, an empty State input = real 0). state: null for whole sequences
// (conv history = the zero point, GRU states from their inputs), else carried (T = 1 or more).
void run_int_graph(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B, int64_t T,
                   ModelIntState* state);
// run_int_graph over a whole sequence (state: null), in chunks of frames with the carried
// state where the graph streams (no bidirectional GRU): the same bits, values kept in cache.
void run_int_graph_in_chunks(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B,
                             int64_t T);
// The initial carried state for batch B: conv histories at the zero point, GRU states
// from the State inputs (internal int32, empty = real 0).
ModelIntState initial_int_state(const QuantizedModel::Impl& m, const std::vector<std::vector<int32_t>>& state_inputs,
                                int64_t B);

}  // namespace fixq::model_detail
