// The integer kernels of whole models: Linear / Conv1d (reference and GEMM), softmax.
#include "model/int_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fixq/error.h"

namespace fixq::model_detail {

namespace {

// Input frame s of batch item b (s < 0: from the history).
inline const int32_t* frame(const int32_t* x, const int32_t* hist, int64_t b, int64_t s, int64_t T, int64_t P, int64_t C) {
  return s >= 0 ? x + (b * T + s) * C : hist + (b * P + P + s) * C;
}

}  // namespace

void conv_int_reference(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                        const int32_t* hist, int32_t* y) {
  const int64_t Cin = node.in_features, Cout = node.out_features, K = node.kernel, d = node.dilation;
  const int64_t P = (K - 1) * d, cin_g = Cin / node.groups, cout_g = Cout / node.groups;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < Cout; ++o) {
        const int64_t g = o / cout_g;
        int64_t acc = q.q_b.empty() ? 0 : q.q_b[static_cast<size_t>(o)];
        for (int64_t i = 0; i < cin_g; ++i)
          for (int64_t j = 0; j < K; ++j) {
            const int32_t xv = frame(x, hist, b, t - (K - 1 - j) * d, T, P, Cin)[g * cin_g + i];
            acc += int64_t{q.q_w[static_cast<size_t>((o * cin_g + i) * K + j)]} * (int64_t{xv} - io.zp_x);
          }
        y[(b * T + t) * Cout + o] = requantize(acc, q.requant[static_cast<size_t>(o)], io.zp_y, io.out);
      }
}

void conv_int_fast(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                   const int32_t* hist, int32_t* y) {
  const int64_t Cin = node.in_features, Cout = node.out_features, K = node.kernel, d = node.dilation;
  const int64_t P = (K - 1) * d, cin_g = Cin / node.groups, cout_g = Cout / node.groups;
  const int64_t rows = B * T, cols = Cin * K;  // the im2col: per row, group after group, [i * K + j]
  const IntType type = io.bits == 16 ? IntType::S16 : IntType::S8;
  std::vector<int16_t> a16;
  std::vector<int8_t> a8;
  if (type == IntType::S16) a16.resize(static_cast<size_t>(rows * cols));
  else a8.resize(static_cast<size_t>(rows * cols));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t r = b * T + t;
      for (int64_t j = 0; j < K; ++j) {
        const int32_t* f = frame(x, hist, b, t - (K - 1 - j) * d, T, P, Cin);
        for (int64_t c = 0; c < Cin; ++c) {
          const int64_t col = (c / cin_g) * cin_g * K + (c % cin_g) * K + j;
          if (type == IntType::S16) a16[static_cast<size_t>(r * cols + col)] = static_cast<int16_t>(f[c]);
          else a8[static_cast<size_t>(r * cols + col)] = static_cast<int8_t>(f[c]);
        }
      }
    }
  std::vector<int16_t> y16(type == IntType::S16 ? static_cast<size_t>(rows * Cout) : 0);
  std::vector<int8_t> y8(type == IntType::S8 ? static_cast<size_t>(rows * Cout) : 0);
  const int32_t azp[1] = {io.zp_x};
  for (int64_t g = 0; g < node.groups; ++g) {
    const int64_t o0 = g * cout_g, c0 = g * cin_g * K;
    const void* a = type == IntType::S16 ? static_cast<const void*>(a16.data() + c0) : static_cast<const void*>(a8.data() + c0);
    RequantEpilogue e;
    e.azp = azp;
    if (!q.q_b.empty()) e.bias = std::span<const int32_t>(q.q_b).subspan(static_cast<size_t>(o0), static_cast<size_t>(cout_g));
    e.scale = std::span<const FixedPointScale>(q.requant).subspan(static_cast<size_t>(o0), static_cast<size_t>(cout_g));
    e.zp_out = io.zp_y;
    e.out_type = type;
    e.out_min = io.out.qmin;
    e.out_max = io.out.qmax;
    void* out = type == IntType::S16 ? static_cast<void*>(y16.data() + o0) : static_cast<void*>(y8.data() + o0);
    gemm_requant(MatrixView{type, a, rows, cin_g * K, cols}, q.packed[static_cast<size_t>(g)], e, out, Cout);
  }
  for (int64_t i = 0; i < rows * Cout; ++i) y[i] = type == IntType::S16 ? y16[static_cast<size_t>(i)] : y8[static_cast<size_t>(i)];
}

void softmax_int(const QNode& q, const int32_t* x, int64_t rows, int64_t C, int32_t zp_y, IntRange out, int32_t* y) {
  const auto n = static_cast<int64_t>(q.exp_table.size());
  auto e = [&](int64_t dq) -> int64_t { return dq < n ? q.exp_table[static_cast<size_t>(dq)] : 0; };
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* xr = x + r * C;
    const int32_t mx = *std::max_element(xr, xr + C);
    int64_t sum = 0;  // >= table[0] = 2^30, <= C 2^30
    for (int64_t c = 0; c < C; ++c) sum += e(int64_t{mx} - xr[c]);
    for (int64_t c = 0; c < C; ++c) {
      const int64_t num = (e(int64_t{mx} - xr[c]) << (q.out_frac + 1)) + sum;  // <= 2^47 + C 2^30
      y[r * C + c] = static_cast<int32_t>(saturate(num / (2 * sum) + zp_y, out.qmin, out.qmax));
    }
  }
}

std::vector<int32_t> softmax_exp_table(double s_in, int bits) {
  std::vector<int32_t> t;
  const int64_t n = int64_t{1} << bits;
  for (int64_t d = 0; d < n; ++d) {
    const double v = round_half_even(std::ldexp(std::exp(-static_cast<double>(d) * s_in), 30));
    if (v == 0.0) break;
    t.push_back(static_cast<int32_t>(v));
  }
  return t;
}

}  // namespace fixq::model_detail
