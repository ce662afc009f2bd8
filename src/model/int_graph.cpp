// The integer graph executor: every node of a quantized model in order, over int32 values,
// for whole sequences (forward) and carried state (the streams) alike.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "fixq/error.h"
#include "gru/int/intonly_io.h"
#include "gru/int/model.h"
#include "model/float_ops.h"
#include "model/int_ops.h"
#include "model/int_run.h"
#include "model/kernels.h"
#include "model/quantized.h"

namespace fixq::model_detail {

namespace {

using gru_detail::intonly::load;
using gru_detail::intonly::store;

// y[i] = t(x[i]) for i < n: the kernel of k (active_model_kernels(), picked once per graph
// run, not per row), or where k is null the element loop that defines it (the table's
// bounds in locals: y's stores could alias them).
template <class Q>
void map_table(const ModelKernels* k, const Table8& t, const int32_t* x, int64_t n, Q* y) {
  if (k != nullptr) {
    const int8_t* bytes = t.bytes.empty() ? nullptr : t.bytes.data();
    if constexpr (std::is_same_v<Q, int8_t>) k->map8_s8(x, n, t.y.data(), bytes, t.qmin, y);
    else k->map8(x, n, t.y.data(), bytes, t.qmin, y);
    return;
  }
  const int32_t lo = t.qmin;
  const int32_t* e = t.y.data();
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Q>(e[x[i] - lo]);
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
      store(q.data(), t, i, h0 && !h0->empty() ? (*h0)[static_cast<size_t>(static_cast<int64_t>(c) * B * H + i)] : g.plans[c].h.zp);
    s.push_back(std::move(q));
  }
  return s;
}

// x [B, T, C] (int32) into the GRU's time-major input [T, B, C] at its x storage, through
// `map` (the rescale into the GRU's x parameters; identity where they are equal).
template <class S, class Map>
void gru_input(const int32_t* x, int64_t B, int64_t T, int64_t C, S* in, Map map) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int32_t* xr = x + (b * T + t) * C;
      S* o = in + (t * B + b) * C;
      for (int64_t c = 0; c < C; ++c) o[c] = static_cast<S>(map(xr[c]));
    }
}

template <class S, class Map>
void gru_input_as(const int32_t* x, int64_t B, int64_t T, int64_t C, std::vector<char>& in, Map map) {
  gru_input(x, B, T, C, reinterpret_cast<S*>(in.data()), map);
}

void run_gru(const ModelKernels* k, const ModelNode& node, const QNode& q, std::vector<std::vector<int32_t>>& vals,
             int64_t B, int64_t T, std::vector<std::vector<char>>& state, const Table8& x_table, LayerBuffers& buf) {
  const QuantizedGru::Impl& g = QuantizedGruAccess::impl(*q.gru);
  const int64_t C = g.input_size, H = g.hidden_size;
  const int D = g.directions();
  const int32_t* x = vals[static_cast<size_t>(node.inputs[0])].data();
  const IntType xs = g.plans[0].x.storage;
  buf.in.resize(static_cast<size_t>(T * B * C * int_type_bytes(xs)));
  auto same = [](int32_t v) { return v; };
  auto rescale = [&](int32_t v) { return q.x_in(v); };
  if (xs == IntType::S16) {
    if (q.x_copy) gru_input_as<int16_t>(x, B, T, C, buf.in, same);
    else gru_input_as<int16_t>(x, B, T, C, buf.in, rescale);
  } else if (q.x_copy) {
    gru_input_as<int8_t>(x, B, T, C, buf.in, same);
  } else if (!x_table.empty()) {
    auto* in = reinterpret_cast<int8_t*>(buf.in.data());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) map_table(k, x_table, x + (b * T + t) * C, C, in + (t * B + b) * C);
  } else {
    gru_input_as<int8_t>(x, B, T, C, buf.in, rescale);
  }
  g.run_layers(buf, T, B, {}, state);
  std::vector<int32_t>& y = vals[static_cast<size_t>(node.outputs[0])];
  y.resize(static_cast<size_t>(B * T * D * H));
  for (int d = 0; d < D; ++d) {
    const IntType hs = g.plans[static_cast<size_t>((g.num_layers - 1) * D + d)].h.storage;
    const bool rescale_h = d == 1 && !q.reverse_copy;
    const char* h = buf.out[static_cast<size_t>(d)].data();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b) {
        int32_t* yr = y.data() + (b * T + t) * D * H + d * H;
        const int64_t src = (t * B + b) * H;
        if (rescale_h) {
          for (int64_t j = 0; j < H; ++j) yr[j] = q.reverse_to_y(load(h, hs, src + j));
        } else if (hs == IntType::S8) {
          const auto* hr = reinterpret_cast<const int8_t*>(h) + src;
          for (int64_t j = 0; j < H; ++j) yr[j] = hr[j];
        } else {
          for (int64_t j = 0; j < H; ++j) yr[j] = load(h, hs, src + j);
        }
      }
  }
  if (node.outputs[1] >= 0) {
    std::vector<int32_t>& hn = vals[static_cast<size_t>(node.outputs[1])];
    hn.resize(static_cast<size_t>(static_cast<int64_t>(state.size()) * B * H));
    for (size_t c = 0; c < state.size(); ++c)
      for (int64_t i = 0; i < B * H; ++i)
        hn[c * static_cast<size_t>(B * H) + static_cast<size_t>(i)] = load(state[c].data(), g.plans[c].h.storage, i);
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
  IntRun run;
  run_int_graph(m, vals, B, T, carried, run);
}

void run_int_graph(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B, int64_t T,
                   ModelIntState* carried, IntRun& run) {
  ModelIntState whole;
  ModelIntState* state = carried;
  if (state == nullptr) {
    whole = initial_int_state(m, vals, B);
    state = &whole;
  }
  const ModelKernels* kernels = active_model_kernels();  // the tables' lookups
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
    // Every operator below writes each of y's elements: sized, not cleared.
    if (node.op != ModelOp::Gru) y.resize(static_cast<size_t>(count));
    const std::vector<Table8>& table = q.table8;
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        const ConvIo io{zp(node.inputs[0]), vy.zero_point[0], out, m.bits};
        std::vector<int32_t>& hist = state->conv_hist[n];
        conv_int_fast(node, q, io, in(0).data(), B, T, hist.data(), y.data(), run.conv);
        if (carried) push_history(hist, in(0).data(), B, T, conv_history_frames(node), node.in_features);
        break;
      }
      case ModelOp::Gru: run_gru(kernels, node, q, vals, B, T, state->gru_state[n], table[0], run.gru); break;
      case ModelOp::Add:
        for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = q.add(in(0)[static_cast<size_t>(i)], in(1)[static_cast<size_t>(i)]);
        break;
      case ModelOp::Mul:
        for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = q.mul(in(0)[static_cast<size_t>(i)], in(1)[static_cast<size_t>(i)]);
        break;
      case ModelOp::Tanh:
      case ModelOp::Sigmoid: {
        const int32_t* x = in(0).data();
        if (!table[0].empty())
          map_table(kernels, table[0], x, count, y.data());
        else
          for (int64_t i = 0; i < count; ++i) y[static_cast<size_t>(i)] = (*q.lut)(x[i]);
        break;
      }
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
          const int32_t* x = in(i).data();
          int32_t* yo = y.data() + off;
          for (int64_t r = 0; r < rows; ++r) {
            const int32_t* xr = x + r * ci;
            int32_t* yr = yo + r * C;
            if (q.copy[i]) std::copy_n(xr, ci, yr);
            else if (!table[i].empty()) map_table(kernels, table[i], xr, ci, yr);
            else for (int64_t c = 0; c < ci; ++c) yr[c] = q.rescale[i](xr[c]);
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
