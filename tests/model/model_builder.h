// Test graphs for the whole-model runtime: a small builder over fixq::Model and the graphs
// of the issue (RNNoise-2024-like, GLU, reset-before GRU, keyword spotter), with random
// weights of real layer shapes and smooth random inputs.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fixq/model.h"

namespace fixq::test {

inline std::vector<float> uniform(std::mt19937& rng, size_t n, float a) {
  std::uniform_real_distribution<float> u(-a, a);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

inline std::shared_ptr<const GruModel> random_gru(std::mt19937& rng, int64_t C, int64_t H, int64_t L = 1,
                                                  bool bidirectional = false,
                                                  GruCellKind kind = GruCellKind::ResetAfter) {
  auto g = std::make_shared<GruModel>();
  g->input_size = C;
  g->hidden_size = H;
  g->num_layers = L;
  g->bidirectional = bidirectional;
  g->cell_kind = kind;
  const int D = bidirectional ? 2 : 1;
  const float a = 1.0f / std::sqrt(static_cast<float>(H));
  for (int64_t l = 0; l < L; ++l)
    for (int d = 0; d < D; ++d) {
      GruCell c;
      c.input_size = l == 0 ? C : D * H;
      c.hidden_size = H;
      c.W = uniform(rng, static_cast<size_t>(3 * H * c.input_size), a);
      c.R = uniform(rng, static_cast<size_t>(3 * H * H), a);
      c.bx = uniform(rng, static_cast<size_t>(3 * H), a);
      c.br = uniform(rng, static_cast<size_t>(3 * H), a);
      g->cells.push_back(std::move(c));
    }
  return g;
}

struct GraphBuilder {
  Model m;
  std::mt19937 rng{1234};

  int value(const std::string& name, int64_t C, ValueKind kind = ValueKind::Sequence, int64_t rows = 0) {
    m.values.push_back({name, kind, C, rows, {kind == ValueKind::State ? "SBH" : "BTC"}});
    return static_cast<int>(m.values.size()) - 1;
  }
  int input(const std::string& name, int64_t C, const std::string& layout = "BTC") {
    const int v = value(name, C);
    m.values[static_cast<size_t>(v)].layout.axes = layout;
    m.inputs.push_back(v);
    return v;
  }
  int state_input(const std::string& name, int64_t S, int64_t H) {
    const int v = value(name, H, ValueKind::State, S);
    m.inputs.push_back(v);
    return v;
  }
  void output(int v, const std::string& layout = "") {
    if (!layout.empty()) m.values[static_cast<size_t>(v)].layout.axes = layout;
    m.outputs.push_back(v);
  }
  ModelNode& node(const std::string& name, ModelOp op, std::vector<int> in, std::vector<int> out) {
    ModelNode n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    m.nodes.push_back(std::move(n));
    return m.nodes.back();
  }
  int linear(const std::string& name, int x, int64_t N, bool bias = true, float gain = 1.0f) {
    const int64_t K = m.values[static_cast<size_t>(x)].features;
    const int y = value(name + ".out", N);
    ModelNode& n = node(name, ModelOp::Linear, {x}, {y});
    n.in_features = K;
    n.out_features = N;
    n.weight = uniform(rng, static_cast<size_t>(N * K), gain / std::sqrt(static_cast<float>(K)));
    if (bias) n.bias = uniform(rng, static_cast<size_t>(N), 0.2f);
    return y;
  }
  int conv(const std::string& name, int x, int64_t Cout, int64_t k, int64_t d = 1, int64_t groups = 1, bool bias = true) {
    const int64_t Cin = m.values[static_cast<size_t>(x)].features;
    const int y = value(name + ".out", Cout);
    ModelNode& n = node(name, ModelOp::Conv1d, {x}, {y});
    n.in_features = Cin;
    n.out_features = Cout;
    n.kernel = k;
    n.dilation = d;
    n.groups = groups;
    n.weight = uniform(rng, static_cast<size_t>(Cout * (Cin / groups) * k),
                       1.0f / std::sqrt(static_cast<float>(Cin / groups * k)));
    if (bias) n.bias = uniform(rng, static_cast<size_t>(Cout), 0.2f);
    return y;
  }
  // Returns y; *state_out (when asked) the final state value.
  int gru(const std::string& name, int x, int64_t H, int64_t L = 1, int h0 = -1, int* state_out = nullptr,
          bool bidirectional = false, GruCellKind kind = GruCellKind::ResetAfter) {
    const int64_t C = m.values[static_cast<size_t>(x)].features;
    const int D = bidirectional ? 2 : 1;
    const int y = value(name + ".y", D * H);
    int hn = -1;
    if (state_out) *state_out = hn = value(name + ".h_n", H, ValueKind::State, L * D);
    ModelNode& n = node(name, ModelOp::Gru, {x, h0}, {y, hn});
    n.gru = random_gru(rng, C, H, L, bidirectional, kind);
    return y;
  }
  int unary(const std::string& name, ModelOp op, int x) {
    const int y = value(name + ".out", m.values[static_cast<size_t>(x)].features);
    node(name, op, {x}, {y});
    return y;
  }
  int binary(const std::string& name, ModelOp op, int a, int b) {
    const int y = value(name + ".out", m.values[static_cast<size_t>(a)].features);
    node(name, op, {a, b}, {y});
    return y;
  }
  int concat(const std::string& name, const std::vector<int>& xs) {
    int64_t C = 0;
    for (int x : xs) C += m.values[static_cast<size_t>(x)].features;
    const int y = value(name + ".out", C);
    node(name, ModelOp::Concat, xs, {y});
    return y;
  }
  int slice(const std::string& name, int x, int64_t begin, int64_t end) {
    const int y = value(name + ".out", end - begin);
    ModelNode& n = node(name, ModelOp::Slice, {x}, {y});
    n.begin = begin;
    n.end = end;
    return y;
  }
};

// RNNoise 2024-like: two causal Conv1d (k = 3) with tanh, three GRUs (24, 48, 96), the
// concatenation of the second conv's output and the three GRU outputs, two Linear +
// sigmoid heads (band gains and voice activity).
inline Model rnnoise_like() {
  GraphBuilder g;
  const int x = g.input("features", 42);
  const int c1 = g.unary("tanh1", ModelOp::Tanh, g.conv("conv1", x, 64, 3));
  const int c2 = g.unary("tanh2", ModelOp::Tanh, g.conv("conv2", c1, 64, 3, 2));
  const int g1 = g.gru("gru1", c2, 24);
  const int g2 = g.gru("gru2", g1, 48);
  const int g3 = g.gru("gru3", g2, 96);
  const int cat = g.concat("cat", {c2, g1, g2, g3});
  g.output(g.unary("gains", ModelOp::Sigmoid, g.linear("dense_gains", cat, 22)));
  g.output(g.unary("vad", ModelOp::Sigmoid, g.linear("dense_vad", cat, 1)));
  return g.m;
}

// A GLU, x * sigmoid(W x + b), between two Linear layers, time-major in and out.
inline Model glu_model() {
  GraphBuilder g;
  const int x = g.input("x", 24, "TBC");
  const int h = g.linear("proj", x, 32);
  const int gate = g.unary("gate", ModelOp::Sigmoid, g.linear("gate_lin", h, 32));
  const int glu = g.binary("glu", ModelOp::Mul, h, gate);
  const int res = g.binary("res", ModelOp::Add, glu, h);
  g.output(g.linear("out", res, 8), "TBC");
  return g.m;
}

// A reset-before GRU (2 layers) with an initial state input and a final state output.
inline Model reset_before_model() {
  GraphBuilder g;
  const int x = g.input("x", 20);
  const int h0 = g.state_input("h0", 2, 32);
  int hn = -1;
  const int y = g.gru("gru", x, 32, 2, h0, &hn, false, GruCellKind::ResetBefore);
  g.output(g.linear("head", y, 6));
  g.output(hn);
  return g.m;
}

// A keyword spotter: channels-first input, Conv1d (k = 5, dilation 2) + ReLU, a depthwise
// Conv1d, a GRU, Linear, softmax; the probabilities, a slice of them and the GRU's state.
inline Model kws_model() {
  GraphBuilder g;
  const int x = g.input("mfcc", 40, "BCT");
  const int c = g.unary("relu", ModelOp::Relu, g.conv("conv", x, 32, 5, 2));
  const int dw = g.conv("dwconv", c, 32, 3, 1, 32);
  int hn = -1;
  const int y = g.gru("gru", dw, 64, 1, -1, &hn);
  const int probs = g.unary("softmax", ModelOp::Softmax, g.linear("classifier", y, 12));
  g.output(probs, "BCT");
  g.output(g.slice("keywords", probs, 2, 7));
  g.output(hn);
  return g.m;
}

// A keyword spotter as ML-KWS-for-MCU's CRNN reads it: conv front end, GRU, a classifier on
// the last frame only (h_n[-1] -> Linear -> Softmax): the output is "BC", [B, 12].
inline Model kws_last_frame_model() {
  GraphBuilder g;
  const int x = g.input("mfcc", 40, "BCT");
  const int c = g.unary("relu", ModelOp::Relu, g.conv("conv", x, 32, 5, 2));
  const int y = g.gru("gru", c, 48, 2);
  g.output(g.unary("softmax", ModelOp::Softmax, g.linear("classifier", y, 12)), "BC");
  return g.m;
}

// Smooth random inputs for every graph input (Sequence: B x T frames in its layout; State:
// small values), of scale `amp`.
inline std::vector<ModelArray> random_inputs(const Model& m, int64_t B, int64_t T, uint32_t seed, float amp = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<ModelArray> out;
  for (int vi : m.inputs) {
    const ModelValue& v = m.values[static_cast<size_t>(vi)];
    ModelArray a;
    if (v.kind == ValueKind::State) {
      a.shape = {v.rows, B, v.features};
      for (int64_t i = 0; i < v.rows * B * v.features; ++i) a.data.push_back(0.3f * std::tanh(n(rng)));
      out.push_back(a);
      continue;
    }
    const int64_t C = v.features;
    std::vector<float> btc(static_cast<size_t>(B * T * C));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) {
        float s = n(rng);
        for (int64_t t = 0; t < T; ++t) {
          s = 0.8f * s + 0.6f * n(rng);
          btc[static_cast<size_t>((b * T + t) * C + c)] = amp * s;
        }
      }
    const std::string& l = v.layout.axes;
    if (l == "TC") a.shape = {T, C};
    else if (l == "TBC") a.shape = {T, B, C};
    else if (l == "BCT") a.shape = {B, C, T};
    else a.shape = {B, T, C};
    a.data.resize(btc.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) {
          const int64_t i = (b * T + t) * C + c;
          const int64_t e = l == "TBC" ? (t * B + b) * C + c : l == "BCT" ? (b * C + c) * T + t : i;
          a.data[static_cast<size_t>(e)] = btc[static_cast<size_t>(i)];
        }
    out.push_back(a);
  }
  return out;
}

// The tests' calibration: 4 batches of random_inputs (B = 4, T = 40, seeds 100..103), every
// value moved by `offset` (a mean away from 0).
inline std::vector<std::vector<ModelArray>> calib_batches(const Model& m, float offset = 0.0f) {
  std::vector<std::vector<ModelArray>> b;
  for (uint32_t s = 0; s < 4; ++s) {
    b.push_back(random_inputs(m, 4, 40, 100 + s));
    for (ModelArray& a : b.back())
      for (float& x : a.data) x += offset;
  }
  return b;
}

inline ModelQuantConfig quant_config(const char* preset, ScaleKind kind) {
  ModelQuantConfig c;
  c.preset = preset;
  c.scales = kind;
  return c;
}

// Frame t of every input as a stream takes it ([B, C]; State inputs empty).
inline std::vector<ModelArray> frame_of(const Model& m, const std::vector<ModelArray>& in, int64_t B, int64_t T, int64_t t) {
  std::vector<ModelArray> f;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const ModelValue& v = m.values[static_cast<size_t>(m.inputs[i])];
    if (v.kind == ValueKind::State) {
      f.push_back({});
      continue;
    }
    const int64_t C = v.features;
    ModelArray a{{B, C}, std::vector<float>(static_cast<size_t>(B * C))};
    const std::string& l = v.layout.axes;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t e = l == "TBC" ? (t * B + b) * C + c : l == "BCT" ? (b * C + c) * T + t : (b * T + t) * C + c;
        a.data[static_cast<size_t>(b * C + c)] = in[i].data[static_cast<size_t>(e)];
      }
    f.push_back(a);
  }
  return f;
}

// Output frame t of a whole-sequence output array (Sequence: [B, C] of frame t; a "BC" output
// holds the last frame only, t = T - 1).
inline std::vector<float> output_frame(const ModelValue& v, const ModelArray& a, int64_t B, int64_t T, int64_t t) {
  const int64_t C = v.features;
  if (v.layout.axes == "BC") return t == T - 1 ? a.data : std::vector<float>{};
  std::vector<float> f(static_cast<size_t>(B * C));
  const std::string& l = v.layout.axes;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t e = l == "TBC" ? (t * B + b) * C + c : l == "BCT" ? (b * C + c) * T + t : (b * T + t) * C + c;
      f[static_cast<size_t>(b * C + c)] = a.data[static_cast<size_t>(e)];
    }
  return f;
}

}  // namespace fixq::test
