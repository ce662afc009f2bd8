// The integer graph executor: every node of a quantized model in order, over int32 values,
// for whole sequences (forward) and carried state (the streams) alike.
#include <algorithm>
#include <cstring>

#include "fixq/error.h"
#include "gru/int/model.h"
#include "model/float_ops.h"
#include "model/int_ops.h"
#include "model/quantized.h"

namespace fixq::model_detail {

namespace {

int32_t load_q(const std::vector<char>& v, IntType t, int64_t i) {
  if (t == IntType::S16) {
    int16_t x;
    std::memcpy(&x, v.data() + 2 * i, 2);
    return x;
  }
  return static_cast<int8_t>(v[static_cast<size_t>(i)]);
}

void store_q(std::vector<char>& v, IntType t, int64_t i, int32_t x) {
  if (t == IntType::S16) {
    const auto s = static_cast<int16_t>(x);
    std::memcpy(v.data() + 2 * i, &s, 2);
  } else {
    v[static_cast<size_t>(i)] = static_cast<char>(static_cast<int8_t>(x));
  }
}

// A GRU node's cells' integer states from its State input (row c = cell c, already in
// cell c's h parameters) or the zero point (real 0).
std::vector<std::vector<char>> gru_initial_state(const QuantizedGru::Impl& g, const std::vector<int32_t>* h0, int64_t B) {
  const int64_t H = g.hidden_size;
  std::vector<std::vector<char>> s;
  for (size_t c = 0; c < g.plans.size(); ++c) {
    const IntType t = g.plans[c].h.storage;
    std::vector<char> q(static_cast<size_t>(B * H * int_type_bytes(t)));
    for (int64_t i = 0; i < B * H; ++i)
      store_q(q, t, i, h0 && !h0->empty() ? (*h0)[static_cast<size_t>(static_cast<int64_t>(c) * B * H + i)] : g.plans[c].h.zp);
    s.push_back(std::move(q));
  }
  return s;
}

void run_gru(const ModelNode& node, const QNode& q, std::vector<std::vector<int32_t>>& vals, int64_t B, int64_t T,
             std::vector<std::vector<char>>& state) {
  const QuantizedGru::Impl& g = QuantizedGruAccess::impl(*q.gru);
  const int64_t C = g.input_size, H = g.hidden_size;
  const int D = g.directions();
  const std::vector<int32_t>& x = vals[static_cast<size_t>(node.inputs[0])];
  LayerBuffers buf;
  const IntType xs = g.plans[0].x.storage;
  buf.in.resize(static_cast<size_t>(T * B * C * int_type_bytes(xs)));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        const int32_t v = x[static_cast<size_t>((b * T + t) * C + c)];
        store_q(buf.in, xs, (t * B + b) * C + c, q.x_copy ? v : q.x_in(v));
      }
  g.run_layers(buf, T, B, {}, state);
  std::vector<int32_t>& y = vals[static_cast<size_t>(node.outputs[0])];
  y.assign(static_cast<size_t>(B * T * D * H), 0);
  for (int d = 0; d < D; ++d) {
    const IntType hs = g.plans[static_cast<size_t>((g.num_layers - 1) * D + d)].h.storage;
    const bool rescale = d == 1 && !q.reverse_copy;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          const int32_t v = load_q(buf.out[static_cast<size_t>(d)], hs, (t * B + b) * H + j);
          y[static_cast<size_t>((b * T + t) * D * H + d * H + j)] = rescale ? q.reverse_to_y(v) : v;
        }
  }
  if (node.outputs[1] >= 0) {
    std::vector<int32_t>& hn = vals[static_cast<size_t>(node.outputs[1])];
    hn.assign(static_cast<size_t>(static_cast<int64_t>(state.size()) * B * H), 0);
    for (size_t c = 0; c < state.size(); ++c)
      for (int64_t i = 0; i < B * H; ++i)
        hn[c * static_cast<size_t>(B * H) + static_cast<size_t>(i)] = load_q(state[c], g.plans[c].h.storage, i);
  }
}

}  // namespace

ModelIntState initial_int_state(const QuantizedModel::Impl& m, const std::vector<std::vector<int32_t>>& vals, int64_t B) {
  ModelIntState s;
  s.conv_hist.resize(m.model.nodes.size());
  s.gru_state.resize(m.model.nodes.size());
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    const ModelNode& node = m.model.nodes[n];
    if (node.op == ModelOp::Conv1d)
      s.conv_hist[n].assign(static_cast<size_t>(B * conv_history_frames(node) * node.in_features),
                            m.vq[static_cast<size_t>(node.inputs[0])].zero_point[0]);
    if (node.op == ModelOp::Gru) {
      const std::vector<int32_t>* h0 = node.inputs[1] >= 0 ? &vals[static_cast<size_t>(node.inputs[1])] : nullptr;
      s.gru_state[n] = gru_initial_state(QuantizedGruAccess::impl(*m.qn[n].gru), h0, B);
    }
  }
  return s;
}

void run_int_graph(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B, int64_t T,
                   ModelIntState* carried) {
  ModelIntState whole;
  ModelIntState* state = carried;
  if (state == nullptr) {
    whole = initial_int_state(m, vals, B);
    state = &whole;
  }
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    const ModelNode& node = m.model.nodes[n];
    const QNode& q = m.qn[n];
    auto in = [&](size_t i) -> const std::vector<int32_t>& { return vals[static_cast<size_t>(node.inputs[i])]; };
    auto zp = [&](int v) { return m.vq[static_cast<size_t>(v)].zero_point[0]; };
    const int yv = node.outputs[0];
    const ModelValueQuant& vy = m.vq[static_cast<size_t>(yv)];
    const IntRange out{vy.qmin(), vy.qmax()};
    std::vector<int32_t>& y = vals[static_cast<size_t>(yv)];
    const int64_t C = m.model.values[static_cast<size_t>(yv)].features;
    const int64_t rows = B * T, count = rows * C;
    if (node.op != ModelOp::Gru) y.assign(static_cast<size_t>(count), 0);
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        const ConvIo io{zp(node.inputs[0]), vy.zero_point[0], out, m.bits};
        std::vector<int32_t>& hist = state->conv_hist[n];
        conv_int_fast(node, q, io, in(0).data(), B, T, hist.data(), y.data());
        if (carried) push_history(hist, in(0).data(), B, T, conv_history_frames(node), node.in_features);
        break;
      }
      case ModelOp::Gru: run_gru(node, q, vals, B, T, state->gru_state[n]); break;
      case ModelOp::Add:
        for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = q.add(in(0)[static_cast<size_t>(i)], in(1)[static_cast<size_t>(i)]);
        break;
      case ModelOp::Mul:
        for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = q.mul(in(0)[static_cast<size_t>(i)], in(1)[static_cast<size_t>(i)]);
        break;
      case ModelOp::Tanh:
      case ModelOp::Sigmoid:
        for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = (*q.lut)(in(0)[static_cast<size_t>(i)]);
        break;
      case ModelOp::Relu: {
        const int32_t z = zp(node.inputs[0]);  // the output's parameters are the input's
        for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = std::max(in(0)[static_cast<size_t>(i)], z);
        break;
      }
      case ModelOp::Softmax: softmax_int(q, in(0).data(), rows, C, vy.zero_point[0], out, y.data()); break;
      case ModelOp::Concat: {
        int64_t off = 0;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          const int64_t ci = m.model.values[static_cast<size_t>(node.inputs[i])].features;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < ci; ++c) {
              const int32_t v = in(i)[static_cast<size_t>(r * ci + c)];
              y[static_cast<size_t>(r * C + off + c)] = q.copy[i] ? v : q.rescale[i](v);
            }
          off += ci;
        }
        break;
      }
      case ModelOp::Slice: {
        const int64_t ci = m.model.values[static_cast<size_t>(node.inputs[0])].features;
        for (int64_t r = 0; r < rows; ++r)
          std::copy_n(in(0).data() + r * ci + node.begin, C, y.data() + r * C);
        break;
      }
    }
  }
}

}  // namespace fixq::model_detail
