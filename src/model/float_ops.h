// Private: the float32 operators of a whole model (fixq/model.h), each in one fixed order
// of operations, so that a whole-sequence forward and a stream (the same functions over one
// frame) give the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "fixq/model.h"

namespace fixq::model_detail {

// y[r, o] = b[o] + sum_k W[o, k] x[r, k], summed left to right from the bias (0 without).
void linear_f32(const ModelNode& node, const float* x, int64_t rows, float* y);

// The causal Conv1d over x [B, T, Cin]: hist [B, P, Cin], P = (kernel - 1) * dilation, holds
// the P frames before x's first (zeros at the start of a sequence). y [B, T, Cout];
// y_t[o] = b[o] + sum over i of o's group (in order), j < kernel (in order) of
// W[o, i, j] * x_{t - (kernel-1-j) d}[i], left to right.
void conv1d_f32(const ModelNode& node, const float* x, int64_t B, int64_t T, const float* hist, float* y);

// The P frames before the next call: the last P frames of hist followed by x [B, T, C].
template <class E>
void push_history(std::vector<E>& hist, const E* x, int64_t B, int64_t T, int64_t P, int64_t C);

// Tanh, Sigmoid (the float GRU's, fixq/gru.h) and Relu (max(x, 0)), element by element.
void unary_f32(ModelOp op, const float* x, int64_t n, float* y);

// Per row of C: e_i = exp(x_i - max), y_i = e_i / sum_j e_j (sum left to right; exp the
// GRU's own).
void softmax_f32(const float* x, int64_t rows, int64_t C, float* y);

// Frame s of batch item b that a causal conv reads: x [B, T, C] for s >= 0, else the
// history hist [B, P, C] of the P frames before x's first.
template <class E>
inline const E* conv_frame(const E* x, const E* hist, int64_t b, int64_t s, int64_t T, int64_t P, int64_t C) {
  return s >= 0 ? x + (b * T + s) * C : hist + (b * P + P + s) * C;
}

inline int64_t conv_history_frames(const ModelNode& n) {
  return n.op == ModelOp::Conv1d ? (n.kernel - 1) * n.dilation : 0;
}

}  // namespace fixq::model_detail
