// The float32 operators of a whole model.
#include "model/float_ops.h"

#include <algorithm>
#include <cstring>

#include "gru/float/math.h"

namespace fixq::model_detail {

void linear_f32(const ModelNode& node, const float* x, int64_t rows, float* y) {
  const int64_t K = node.in_features, N = node.out_features;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < N; ++o) {
      const float* w = node.weight.data() + o * K;
      const float* xr = x + r * K;
      float acc = node.bias.empty() ? 0.0f : node.bias[static_cast<size_t>(o)];
      for (int64_t k = 0; k < K; ++k) acc += w[k] * xr[k];
      y[r * N + o] = acc;
    }
}

void conv1d_f32(const ModelNode& node, const float* x, int64_t B, int64_t T, const float* hist, float* y) {
  const int64_t Cin = node.in_features, Cout = node.out_features, K = node.kernel, d = node.dilation;
  const int64_t P = (K - 1) * d, cin_g = Cin / node.groups, cout_g = Cout / node.groups;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < Cout; ++o) {
        const int64_t g = o / cout_g;
        float acc = node.bias.empty() ? 0.0f : node.bias[static_cast<size_t>(o)];
        for (int64_t i = 0; i < cin_g; ++i)
          for (int64_t j = 0; j < K; ++j) {
            const float* frame = conv_frame(x, hist, b, t - (K - 1 - j) * d, T, P, Cin);
            acc += node.weight[static_cast<size_t>((o * cin_g + i) * K + j)] * frame[g * cin_g + i];
          }
        y[(b * T + t) * Cout + o] = acc;
      }
}

template <class E>
void push_history(std::vector<E>& hist, const E* x, int64_t B, int64_t T, int64_t P, int64_t C) {
  if (P == 0) return;
  // In place, per batch item: the last P - T history frames move up, x's last frames follow.
  const int64_t keep = std::max<int64_t>(0, P - T), from_x = P - keep;
  for (int64_t b = 0; b < B; ++b) {
    E* h = hist.data() + b * P * C;
    if (keep > 0) std::memmove(h, h + (P - keep) * C, sizeof(E) * static_cast<size_t>(keep * C));
    if (from_x > 0) std::memcpy(h + keep * C, x + (b * T + T - from_x) * C, sizeof(E) * static_cast<size_t>(from_x * C));
  }
}
template void push_history(std::vector<float>&, const float*, int64_t, int64_t, int64_t, int64_t);
template void push_history(std::vector<int32_t>&, const int32_t*, int64_t, int64_t, int64_t, int64_t);

void unary_f32(ModelOp op, const float* x, int64_t n, float* y) {
  const gru_float::ScalarOps o;
  for (int64_t i = 0; i < n; ++i) {
    if (op == ModelOp::Tanh) y[i] = gru_float::tanh_f32(o, x[i]);
    else if (op == ModelOp::Sigmoid) y[i] = gru_float::sigmoid_f32(o, x[i]);
    else y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
}

void softmax_f32(const float* x, int64_t rows, int64_t C, float* y) {
  const gru_float::ScalarOps o;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float mx = xr[0];
    for (int64_t c = 1; c < C; ++c) mx = std::max(mx, xr[c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      yr[c] = gru_float::exp_f32(o, xr[c] - mx);
      sum += yr[c];
    }
    for (int64_t c = 0; c < C; ++c) yr[c] /= sum;
  }
}

}  // namespace fixq::model_detail
