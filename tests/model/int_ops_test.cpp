// The integer operators of whole models: Linear / Conv1d's GEMM path equal to the scalar
// reference bit for bit on every kernel path, the reference equal to an int128 oracle
// written here, softmax within its stated bound of the float softmax, and the element-wise
// operators within their rounding of the float operation (docs/spec.md part 10).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "fixq/arith.h"
#include "kernel_paths.h"
#include "model/int_ops.h"
#include "model/int_run.h"
#include "model/kernels.h"
#include "model_builder.h"

namespace fixq::test {
namespace {

using model_detail::ConvIo;
using model_detail::QNode;
using i128 = detail::int128;  // arith.h's 128-bit integer (a compiler extension, named once)

struct ConvCase {
  int64_t cin, cout, k, d, groups;
  int bits;
  bool extreme;  // inputs and weights at the ends of their ranges
  bool pow2;
};

// A conv node with integer constants drawn at random (weights int8, bias int32 up to 2^20,
// requantization scales around the accumulator's spread).
struct ConvFixture {
  ModelNode node;
  QNode q;
  ConvIo io;
  std::vector<int32_t> x, hist;
  int64_t B = 2, T = 9;

  explicit ConvFixture(const ConvCase& c, uint32_t seed) {
    std::mt19937 rng(seed);
    node.op = c.k == 1 && c.d == 1 && c.groups == 1 ? ModelOp::Linear : ModelOp::Conv1d;
    node.in_features = c.cin;
    node.out_features = c.cout;
    node.kernel = c.k;
    node.dilation = c.d;
    node.groups = c.groups;
    const int64_t per_row = c.cin / c.groups * c.k;
    const int32_t lo = -(1 << (c.bits - 1)), hi = (1 << (c.bits - 1)) - 1;
    std::uniform_int_distribution<int32_t> w(-128, 127), xs(lo, hi), bias(-(1 << 20), 1 << 20), end(0, 1);
    for (int64_t i = 0; i < c.cout * per_row; ++i) q.q_w.push_back(c.extreme ? (end(rng) ? 127 : -128) : w(rng));
    for (int64_t o = 0; o < c.cout; ++o) q.q_b.push_back(c.extreme ? (end(rng) ? INT32_MAX : INT32_MIN) : bias(rng));
    std::uniform_real_distribution<double> e(-3.0, 1.0);
    for (int64_t o = 0; o < c.cout; ++o) {
      const double sigma = std::pow(2.0, e(rng)) * (1 << (c.bits - 1)) / (128.0 * (1 << (c.bits - 1)) * std::sqrt(double(per_row)));
      q.requant.push_back(c.pow2 ? FixedPointScale::pow2(static_cast<int>(std::lround(-std::log2(sigma))))
                                 : FixedPointScale::from_real(sigma));
    }
    io.zp_x = c.extreme ? hi : std::uniform_int_distribution<int32_t>(lo / 2, hi / 2)(rng);
    model_detail::prepare_conv(node, q, io.zp_x, c.bits);
    io.zp_y = std::uniform_int_distribution<int32_t>(lo / 2, hi / 2)(rng);
    io.out = {lo, hi};
    io.bits = c.bits;
    for (int64_t i = 0; i < B * T * c.cin; ++i) x.push_back(c.extreme ? (end(rng) ? hi : lo) : xs(rng));
    const int64_t P = (c.k - 1) * c.d;
    for (int64_t i = 0; i < B * P * c.cin; ++i) hist.push_back(xs(rng));
  }
};

const ConvCase kConvCases[] = {
    {13, 7, 3, 2, 1, 8, false, true},   {13, 7, 3, 2, 1, 16, false, false}, {32, 32, 3, 1, 32, 8, false, false},
    {30, 12, 4, 3, 3, 16, false, true}, {300, 5, 1, 1, 1, 8, false, false}, {65, 33, 1, 1, 1, 16, false, true},
    {16, 9, 5, 1, 1, 8, true, false},   {16, 9, 2, 4, 1, 16, true, true},   {7, 7, 3, 1, 7, 16, true, false},
};

// The exact value: the sum in int128, then (acc * m + 2^(shift-1)) >> shift as a floor
// division of int128 numbers, then the zero point and saturation.
int32_t oracle_output(const ConvFixture& f, int64_t b, int64_t t, int64_t o) {
  const ModelNode& n = f.node;
  const int64_t P = (n.kernel - 1) * n.dilation, cin_g = n.in_features / n.groups, cout_g = n.out_features / n.groups;
  i128 acc = f.q.q_b[static_cast<size_t>(o)];
  for (int64_t i = 0; i < cin_g; ++i)
    for (int64_t j = 0; j < n.kernel; ++j) {
      const int64_t s = t - (n.kernel - 1 - j) * n.dilation, c = (o / cout_g) * cin_g + i;
      const int32_t xv = s >= 0 ? f.x[static_cast<size_t>((b * f.T + s) * n.in_features + c)]
                                : f.hist[static_cast<size_t>((b * P + P + s) * n.in_features + c)];
      acc += i128{f.q.q_w[static_cast<size_t>((o * cin_g + i) * n.kernel + j)]} * (xv - f.io.zp_x);
    }
  const FixedPointScale& r = f.q.requant[static_cast<size_t>(o)];
  i128 v = acc * r.m;
  if (r.shift > 0) {
    const i128 den = i128{1} << r.shift;
    i128 num = v + den / 2;
    v = num >= 0 ? num / den : -((-num + den - 1) / den);  // floor
  } else {
    v <<= -r.shift;
  }
  const i128 guard = i128{1} << 40;  // rescaled_term's clamp, beyond every output range
  v = std::clamp(v, -guard, guard) + f.io.zp_y;
  return static_cast<int32_t>(std::clamp<i128>(v, f.io.out.qmin, f.io.out.qmax));
}

TEST(ModelIntOps, ConvReferenceEqualsInt128Oracle) {
  uint32_t seed = 1;
  for (const ConvCase& c : kConvCases) {
    const ConvFixture f(c, seed++);
    std::vector<int32_t> y(static_cast<size_t>(f.B * f.T * c.cout));
    model_detail::conv_int_reference(f.node, f.q, f.io, f.x.data(), f.B, f.T, f.hist.data(), y.data());
    int64_t saturated = 0;
    for (int64_t b = 0; b < f.B; ++b)
      for (int64_t t = 0; t < f.T; ++t)
        for (int64_t o = 0; o < c.cout; ++o) {
          const int32_t got = y[static_cast<size_t>((b * f.T + t) * c.cout + o)];
          ASSERT_EQ(got, oracle_output(f, b, t, o)) << "case cin " << c.cin << " k " << c.k << " at " << b << "," << t << "," << o;
          saturated += got == f.io.out.qmin || got == f.io.out.qmax;
        }
    if (!c.extreme) {
      EXPECT_LT(saturated, static_cast<int64_t>(y.size())) << "every output saturated: a useless case";
    }
  }
}

TEST(ModelIntOps, ConvFastPathEqualsReferenceOnEveryKernelPath) {
  uint32_t seed = 100;
  int lane_pow2 = 0, lane_multiplier = 0, element = 0;
  for (const ConvCase& c : kConvCases) {
    const ConvFixture f(c, seed++);
    // Which epilogue the fast path takes: the lane form wherever the bias leaves room (an
    // extreme case's bias of +-2^31 does not), of the case's scale kind.
    EXPECT_EQ(f.q.lanes.empty(), c.extreme) << "cin " << c.cin << " k " << c.k;
    if (f.q.lanes.empty()) ++element;
    else (f.q.lanes.pow2 ? lane_pow2 : lane_multiplier) += 1;
    std::vector<int32_t> ref(static_cast<size_t>(f.B * f.T * c.cout));
    model_detail::conv_int_reference(f.node, f.q, f.io, f.x.data(), f.B, f.T, f.hist.data(), ref.data());
    for (const KernelPath& path : kernel_paths()) {
      PathScope scope(path);
      std::vector<int32_t> y(ref.size(), 12345);
      model_detail::conv_int_fast(f.node, f.q, f.io, f.x.data(), f.B, f.T, f.hist.data(), y.data());
      ASSERT_EQ(y, ref) << path.name() << " cin " << c.cin << " cout " << c.cout << " k " << c.k << " groups " << c.groups
                        << " bits " << c.bits;
    }
  }
  EXPECT_GE(lane_pow2, 2);
  EXPECT_GE(lane_multiplier, 2);
  EXPECT_GE(element, 1);
}

// A stream or a forward's chunks reuse one ConvScratch across calls and shapes: what an
// earlier call left in it must not reach the next (cases run up and down in size).
TEST(ModelIntOps, ConvFastPathWithAReusedScratchEqualsReference) {
  std::vector<ConvFixture> fixtures;
  uint32_t seed = 200;
  for (const ConvCase& c : kConvCases) fixtures.emplace_back(c, seed++);
  for (const KernelPath& path : kernel_paths()) {
    PathScope scope(path);
    model_detail::ConvScratch scratch;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t k = 0; k < fixtures.size(); ++k) {
        const ConvFixture& f = fixtures[pass == 0 ? k : fixtures.size() - 1 - k];
        std::vector<int32_t> ref(static_cast<size_t>(f.B * f.T * f.node.out_features));
        model_detail::conv_int_reference(f.node, f.q, f.io, f.x.data(), f.B, f.T, f.hist.data(), ref.data());
        std::vector<int32_t> y(ref.size(), 12345);
        model_detail::conv_int_fast(f.node, f.q, f.io, f.x.data(), f.B, f.T, f.hist.data(), y.data(), scratch);
        ASSERT_EQ(y, ref) << path.name() << " pass " << pass << " case " << k;
      }
  }
}

// The nodes' 8-bit tables (QNode::table8) stand in for the activation tables and rescales element by element:
// each must hold the map's integer for every value of its input's range, and exist exactly
// where the input is 8-bit and the node maps it (an int16 model has none).
TEST(ModelIntOps, TablesAreTheMapsTheyReplace) {
  const Model m = rnnoise_like();
  std::vector<std::vector<ModelArray>> calib;
  for (uint32_t s = 0; s < 2; ++s) calib.push_back(random_inputs(m, 2, 40, 300 + s));
  for (const char* preset : {"int8", "int16"})
    for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
      ModelQuantConfig cfg;
      cfg.preset = preset;
      cfg.scales = kind;
      const QuantizedModel qm = QuantizedModel::quantize(m, calib, cfg);
      const QuantizedModel::Impl& im = qm.impl();
      int activations = 0, rescales = 0;
      for (size_t n = 0; n < im.model.nodes.size(); ++n) {
        const ModelNode& node = im.model.nodes[n];
        const QNode& q = im.qn[n];
        ASSERT_EQ(im.qn[n].table8.size(), node.inputs.size());
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          const model_detail::Table8& t = im.qn[n].table8[i];
          if (node.inputs[i] < 0) {  // an absent optional input (a GRU without initial state)
            EXPECT_TRUE(t.empty()) << node.name << " input " << i;
            continue;
          }
          const ModelValueQuant& vx = im.vq[static_cast<size_t>(node.inputs[i])];
          std::function<int32_t(int32_t)> map;
          if ((node.op == ModelOp::Tanh || node.op == ModelOp::Sigmoid) && q.lut) map = [&](int32_t x) { return (*q.lut)(x); };
          if (node.op == ModelOp::Concat && !q.copy[i]) map = [&](int32_t x) { return q.rescale[i](x); };
          if (node.op == ModelOp::Gru && i == 0 && !q.x_copy) map = [&](int32_t x) { return q.x_in(x); };
          if (!map || vx.bits != 8) {
            EXPECT_TRUE(t.empty()) << preset << " node " << node.name << " input " << i;
            continue;
          }
          ASSERT_EQ(t.qmin, vx.qmin());
          ASSERT_EQ(static_cast<int64_t>(t.y.size()), int64_t{vx.qmax()} - vx.qmin() + 1) << node.name;
          for (int32_t x = vx.qmin(); x <= vx.qmax(); ++x) ASSERT_EQ(t(x), map(x)) << node.name << " q " << x;
          (node.op == ModelOp::Concat || node.op == ModelOp::Gru ? rescales : activations) += 1;
        }
      }
      if (std::string(preset) == "int8") {
        EXPECT_GT(activations, 0) << "no activation table: a useless case";
        EXPECT_GT(rescales, 0) << "no rescale table: a useless case";
      } else {
        EXPECT_EQ(activations + rescales, 0);
      }
    }
}

// The table gathers (model/kernels.h map8) on every kernel path against the element loop
// that defines them: ragged lengths around the lane counts, every index of the table, into
// int32 and int8, with nothing written past n.
TEST(ModelIntOps, TableGathersEqualTheElementLoopOnEveryKernelPath) {
  bool listed = false;  // a family of this build's architecture brings model kernels (x86-64's do)
  for (Isa isa : kAllIsas) listed = listed || model_detail::registry().native(isa) != nullptr;
  if (!listed) GTEST_SKIP() << "no family of this architecture has model kernels: every path runs the element loops";
  std::mt19937 rng(17);
  std::vector<int32_t> table(256);
  for (int32_t& e : table) e = std::uniform_int_distribution<int32_t>(-128, 127)(rng);
  table.front() = -128;
  table.back() = 127;
  const cpu::AlignedVector<int8_t> bytes(table.begin(), table.end());
  std::uniform_int_distribution<int32_t> xs(-128, 127);
  int fast = 0;
  for (const KernelPath& path : fast_paths()) {
    PathScope scope(path);
    const model_detail::ModelKernels* k = model_detail::active_model_kernels();
    if (k == nullptr) continue;  // a family without model kernels: the element loop
    ++fast;
    for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 96, 255, 256, 300, 301})
    for (const int8_t* b : {static_cast<const int8_t*>(nullptr), bytes.data()}) {
      std::vector<int32_t> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = n == 256 ? static_cast<int32_t>(i) - 128 : xs(rng);
      std::vector<int32_t> y32(static_cast<size_t>(n) + 16, 12345);
      std::vector<int8_t> y8(static_cast<size_t>(n) + 64, 77);
      // Without the table's bytes and with them (read from registers where the family can).
      k->map8(x.data(), n, table.data(), b, -128, y32.data());
      k->map8_s8(x.data(), n, table.data(), b, -128, y8.data());
      for (int64_t i = 0; i < n; ++i) {
        const int32_t want = table[static_cast<size_t>(x[static_cast<size_t>(i)] + 128)];
        ASSERT_EQ(y32[static_cast<size_t>(i)], want) << path.name() << " n " << n << " i " << i << " bytes " << (b != nullptr);
        ASSERT_EQ(y8[static_cast<size_t>(i)], want) << path.name() << " n " << n << " i " << i << " bytes " << (b != nullptr);
      }
      for (size_t i = static_cast<size_t>(n); i < y32.size(); ++i) ASSERT_EQ(y32[i], 12345) << path.name() << " past n";
      for (size_t i = static_cast<size_t>(n); i < y8.size(); ++i) ASSERT_EQ(y8[i], 77) << path.name() << " past n";
    }
  }
  EXPECT_GT(fast, 0) << "no kernel path has model kernels: nothing was tested";
}

// Whole graphs give the same integers on every kernel path as on the scalar one: the model
// kernels, the GEMM and the GRU step together, at a batch and length that leave ragged
// tiles (the outputs compared as floats: dequantization is one fixed map of the integers).
TEST(ModelIntOps, WholeGraphsGiveTheSameIntegersOnEveryKernelPath) {
  for (const Model& m : {rnnoise_like(), glu_model()}) {
    const std::vector<std::vector<ModelArray>> calib{random_inputs(m, 2, 24, 100)};  // ranges only
    const std::vector<ModelArray> x = random_inputs(m, 3, 37, 9);
    for (const char* preset : {"int8", "int16"})
      for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
        ModelQuantConfig cfg = quant_config(preset, kind);
        cfg.range_search = false;  // the integers' paths are the subject, not the ranges
        const QuantizedModel qm = QuantizedModel::quantize(m, calib, cfg);
        std::vector<ModelArray> ref;
        {
          PathScope scope(scalar_path());
          ref = qm.forward(x);
        }
        for (const KernelPath& path : fast_paths()) {
          PathScope scope(path);
          const std::vector<ModelArray> y = qm.forward(x);
          ASSERT_EQ(y.size(), ref.size());
          for (size_t o = 0; o < y.size(); ++o)
            ASSERT_EQ(y[o].data, ref[o].data) << path.name() << " " << preset << " output " << o;
        }
      }
  }
}

// Softmax: |deq(y) - softmax(deq(x))| <= 1/2 LSB + (C + 1) 2^-31, and <= 1 LSB where y
// saturated at qmax (probability 1 is one step above it).
TEST(ModelIntOps, SoftmaxWithinItsBoundOfFloat) {
  std::mt19937 rng(5);
  for (int bits : {8, 16}) {
    for (double s_in : {0.003, 0.05, 0.4}) {
      QNode q;
      q.exp_table = model_detail::softmax_exp_table(s_in, bits);
      q.out_frac = bits == 16 ? 15 : 8;
      const int32_t zp_y = bits == 16 ? 0 : -128;
      const IntRange out{-(1 << (bits - 1)), (1 << (bits - 1)) - 1};
      const double lsb = std::ldexp(1.0, -q.out_frac);
      for (int64_t C : {1, 2, 12, 97}) {
        std::uniform_int_distribution<int32_t> xs(out.qmin, out.qmax);
        const int32_t zp_x = xs(rng) / 2;
        for (int rep = 0; rep < 20; ++rep) {
          std::vector<int32_t> x(static_cast<size_t>(C)), y(x.size());
          for (auto& v : x) v = rep == 0 ? out.qmax : rep == 1 ? (xs(rng) & 1 ? out.qmin : out.qmax) : xs(rng);
          if (rep == 2 && C > 1) x[1] = x[0] = out.qmax;  // ties at the maximum
          model_detail::softmax_int(q, x.data(), 1, C, zp_y, out, y.data());
          double mx = -1e300, sum = 0;
          for (int32_t v : x) mx = std::max(mx, (v - zp_x) * s_in);
          for (int32_t v : x) sum += std::exp((v - zp_x) * s_in - mx);
          for (int64_t c = 0; c < C; ++c) {
            const double p = std::exp((x[static_cast<size_t>(c)] - zp_x) * s_in - mx) / sum;
            const double got = (y[static_cast<size_t>(c)] - zp_y) * lsb;
            const double bound = y[static_cast<size_t>(c)] == out.qmax ? lsb : 0.5 * lsb + (C + 1) * std::ldexp(1.0, -31);
            ASSERT_LE(std::abs(got - p), bound) << "bits " << bits << " s_in " << s_in << " C " << C << " c " << c;
          }
        }
      }
    }
  }
}

// One-operator graphs in integers: every representable input pair (8 bits) or a sweep (16
// bits) against the float operation on the dequantized inputs, within the stated roundings.
TEST(ModelIntOps, ElementwiseOperatorsWithinTheirRounding) {
  for (const char* preset : {"int8", "int16"})
    for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier})
      for (ModelOp op : {ModelOp::Add, ModelOp::Mul, ModelOp::Tanh, ModelOp::Sigmoid, ModelOp::Relu, ModelOp::Concat}) {
        GraphBuilder g;
        const int a = g.input("a", 1), b = g.input("b", 1);
        const bool binary = op == ModelOp::Add || op == ModelOp::Mul;
        int y;
        if (binary) y = g.binary("op", op, a, b);
        else if (op == ModelOp::Concat) y = g.concat("op", {a, b});
        else y = g.unary("op", op, a);
        g.output(y);
        if (!binary && op != ModelOp::Concat) g.output(b);  // a graph input must be read or passed out
        // Calibration ranges: a in [-3, 2], b in [-0.5, 4] (so every parameter differs).
        std::vector<ModelArray> calib{{{1, 2, 1}, {-3.0f, 2.0f}}, {{1, 2, 1}, {-0.5f, 4.0f}}};
        ModelQuantConfig cfg;
        cfg.preset = preset;
        cfg.scales = kind;
        const QuantizedModel qm = QuantizedModel::quantize(g.m, {calib}, cfg);
        const QuantizedModelInfo info = qm.info();
        const ModelValueQuant &pa = info.values[static_cast<size_t>(a)], &pb = info.values[static_cast<size_t>(b)],
                              &py = info.values[static_cast<size_t>(y)];
        const int64_t n = 256;
        std::vector<int32_t> qa, qb;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < (binary ? 16 : 1); ++j) {
            qa.push_back(static_cast<int32_t>(pa.qmin() + (int64_t{pa.qmax()} - pa.qmin()) * i / (n - 1)));
            qb.push_back(static_cast<int32_t>(pb.qmin() + (int64_t{pb.qmax()} - pb.qmin()) * j / 15));
          }
        const int64_t T = static_cast<int64_t>(qa.size());
        const int bits = pa.bits;
        const auto out = qm.forward_raw({{{1, T, 1}, bits, qa}, {{1, T, 1}, bits, qb}});
        const double sy = py.scale[0];
        for (int64_t t = 0; t < T; ++t) {
          const double xa = (qa[static_cast<size_t>(t)] - pa.zero_point[0]) * double(pa.scale[0]);
          const double xb = (qb[static_cast<size_t>(t)] - pb.zero_point[0]) * double(pb.scale[0]);
          std::vector<double> want;
          double tol_lsb = 0.5;
          switch (op) {
            case ModelOp::Add: want = {xa + xb}; tol_lsb = 1.0; break;  // two rounded terms
            case ModelOp::Mul: want = {xa * xb}; break;
            case ModelOp::Tanh: want = {std::tanh(xa)}; tol_lsb = bits == 8 ? 1.0 : 2.0; break;  // the tables' bound
            case ModelOp::Sigmoid: want = {1.0 / (1.0 + std::exp(-xa))}; tol_lsb = bits == 8 ? 1.0 : 2.0; break;
            case ModelOp::Relu: want = {std::max(xa, 0.0)}; tol_lsb = 0.0; break;
            default: want = {xa, xb}; break;  // Concat: each input rescaled once
          }
          for (size_t k = 0; k < want.size(); ++k) {
            const int32_t q = out[0].data[static_cast<size_t>(t) * want.size() + k];
            const double lo = (py.qmin() - py.zero_point[0]) * sy, hi = (py.qmax() - py.zero_point[0]) * sy;
            const double w = std::clamp(want[k], lo, hi);  // saturation
            const double mult_err = kind == ScaleKind::Multiplier ? std::abs(w) * 1e-8 : 0.0;
            ASSERT_LE(std::abs((q - py.zero_point[0]) * sy - w), tol_lsb * sy + mult_err + 1e-12)
                << preset << " " << to_string(kind) << " " << to_string(op) << " t " << t << " k " << k;
          }
        }
      }
}

}  // namespace
}  // namespace fixq::test
