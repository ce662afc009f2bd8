// The float operators of whole models against straightforward double-precision loops
// written here (the definitions of fixq/model.h), on ragged shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "model_builder.h"

namespace fixq::test {
namespace {

// Runs a one-node graph whose input is [B, T, C] BTC and returns the output [B, T, N].
std::vector<float> run_one(const Model& m, const std::vector<float>& x, int64_t B, int64_t T) {
  const int64_t C = m.values[static_cast<size_t>(m.inputs[0])].features;
  return model_forward(m, {{{B, T, C}, x}})[0].data;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << "element " << i;
}

TEST(ModelFloatOps, LinearMatchesDoubleLoop) {
  for (auto [K, N, bias] : {std::tuple{37, 13, true}, {1, 1, false}, {64, 3, true}}) {
    GraphBuilder g;
    const int x = g.input("x", K);
    g.output(g.linear("lin", x, N, bias));
    const int64_t B = 3, T = 7;
    const std::vector<float> xs = uniform(g.rng, static_cast<size_t>(B * T * K), 2.0f);
    const ModelNode& n = g.m.nodes[0];
    std::vector<double> want;
    for (int64_t r = 0; r < B * T; ++r)
      for (int64_t o = 0; o < N; ++o) {
        double acc = bias ? n.bias[static_cast<size_t>(o)] : 0.0;
        for (int64_t k = 0; k < K; ++k) acc += double(n.weight[static_cast<size_t>(o * K + k)]) * xs[static_cast<size_t>(r * K + k)];
        want.push_back(acc);
      }
    expect_close(run_one(g.m, xs, B, T), want, 1e-5);
  }
}

TEST(ModelFloatOps, CausalConvMatchesDoubleLoop) {
  struct Case {
    int64_t cin, cout, k, d, groups;
  };
  for (const Case c : {Case{5, 7, 3, 1, 1}, Case{6, 9, 4, 3, 3}, Case{8, 8, 3, 2, 8}, Case{3, 2, 1, 1, 1}, Case{4, 8, 5, 1, 4}}) {
    GraphBuilder g;
    const int x = g.input("x", c.cin);
    g.output(g.conv("conv", x, c.cout, c.k, c.d, c.groups));
    const int64_t B = 2, T = 11;
    const std::vector<float> xs = uniform(g.rng, static_cast<size_t>(B * T * c.cin), 1.5f);
    const ModelNode& n = g.m.nodes[0];
    const int64_t cig = c.cin / c.groups, cog = c.cout / c.groups;
    std::vector<double> want;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t o = 0; o < c.cout; ++o) {
          double acc = n.bias[static_cast<size_t>(o)];
          for (int64_t i = 0; i < cig; ++i)
            for (int64_t j = 0; j < c.k; ++j) {
              const int64_t s = t - (c.k - 1 - j) * c.d;
              if (s < 0) continue;  // causal padding: zeros
              acc += double(n.weight[static_cast<size_t>((o * cig + i) * c.k + j)]) *
                     xs[static_cast<size_t>((b * T + s) * c.cin + (o / cog) * cig + i)];
            }
          want.push_back(acc);
        }
    expect_close(run_one(g.m, xs, B, T), want, 1e-5);
  }
}

TEST(ModelFloatOps, SoftmaxTanhSigmoidReluMatchDouble) {
  const int64_t C = 11, B = 2, T = 5;
  for (ModelOp op : {ModelOp::Softmax, ModelOp::Tanh, ModelOp::Sigmoid, ModelOp::Relu}) {
    GraphBuilder g;
    const int x = g.input("x", C);
    g.output(g.unary("f", op, x));
    std::vector<float> xs = uniform(g.rng, static_cast<size_t>(B * T * C), 6.0f);
    xs[0] = 80.0f;  // softmax: a large maximum must not overflow
    std::vector<double> want(xs.size());
    for (int64_t r = 0; r < B * T; ++r) {
      double mx = -1e300, sum = 0;
      for (int64_t c = 0; c < C; ++c) mx = std::max(mx, double(xs[static_cast<size_t>(r * C + c)]));
      for (int64_t c = 0; c < C; ++c) sum += std::exp(double(xs[static_cast<size_t>(r * C + c)]) - mx);
      for (int64_t c = 0; c < C; ++c) {
        const double v = xs[static_cast<size_t>(r * C + c)];
        double& w = want[static_cast<size_t>(r * C + c)];
        if (op == ModelOp::Softmax) w = std::exp(v - mx) / sum;
        else if (op == ModelOp::Tanh) w = std::tanh(v);
        else if (op == ModelOp::Sigmoid) w = 1.0 / (1.0 + std::exp(-v));
        else w = v > 0 ? v : 0;
      }
    }
    expect_close(run_one(g.m, xs, B, T), want, 4e-6);
  }
}

TEST(ModelFloatOps, ConcatSliceAddMulAreExact) {
  GraphBuilder g;
  const int a = g.input("a", 3), b = g.input("b", 5);
  const int cat = g.concat("cat", {a, b});
  const int s = g.slice("s", cat, 2, 5);
  const int sa = g.slice("sa", b, 0, 3);
  g.output(g.binary("add", ModelOp::Add, s, sa));
  g.output(g.binary("mul", ModelOp::Mul, s, a));
  const int64_t B = 2, T = 4;
  const std::vector<float> av = uniform(g.rng, static_cast<size_t>(B * T * 3), 1.0f),
                           bv = uniform(g.rng, static_cast<size_t>(B * T * 5), 1.0f);
  const auto out = model_forward(g.m, {{{B, T, 3}, av}, {{B, T, 5}, bv}});
  for (int64_t r = 0; r < B * T; ++r)
    for (int64_t c = 0; c < 3; ++c) {
      const float sv = c == 0 ? av[static_cast<size_t>(r * 3 + 2)] : bv[static_cast<size_t>(r * 5 + c - 1)];
      EXPECT_EQ(out[0].data[static_cast<size_t>(r * 3 + c)], sv + bv[static_cast<size_t>(r * 5 + c)]);
      EXPECT_EQ(out[1].data[static_cast<size_t>(r * 3 + c)], sv * av[static_cast<size_t>(r * 3 + c)]);
    }
}

TEST(ModelFloatOps, GruNodeIsTheFloatGru) {
  GraphBuilder g;
  const int x = g.input("x", 10, "TBC");
  const int h0 = g.state_input("h0", 2, 16);
  int hn = -1;
  g.output(g.gru("gru", x, 16, 2, h0, &hn), "TBC");
  g.output(hn);
  const int64_t B = 3, T = 9;
  const auto in = random_inputs(g.m, B, T, 7);
  const auto out = model_forward(g.m, in);
  GruRunOptions opt;
  opt.h0 = in[1].data.data();
  const GruOutput want = gru_forward(*g.m.nodes[0].gru, in[0].data.data(), {T, B, 10}, opt);  // time-major as TBC
  EXPECT_EQ(out[0].data, want.y);
  EXPECT_EQ(out[1].data, want.h_n);
  EXPECT_EQ(out[0].shape, (Shape{T, B, 16}));
  // An empty state input is zeros.
  const auto zero = model_forward(g.m, {in[0], ModelArray{}});
  const GruOutput want0 = gru_forward(*g.m.nodes[0].gru, in[0].data.data(), {T, B, 10});
  EXPECT_EQ(zero[0].data, want0.y);
}

TEST(ModelFloatOps, LayoutsGiveTheSameNumbers) {
  // One conv net fed the same sequences in each layout.
  std::vector<std::vector<float>> results;
  for (const char* layout : {"BTC", "TBC", "BCT"}) {
    GraphBuilder g;
    const int x = g.input("x", 6, layout);
    g.output(g.conv("conv", x, 4, 3, 2), "BTC");
    const auto in = random_inputs(g.m, 2, 8, 99);
    results.push_back(model_forward(g.m, in)[0].data);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  // "TC": B = 1.
  GraphBuilder g;
  const int x = g.input("x", 6, "TC");
  g.output(g.conv("conv", x, 4, 3, 2), "TC");
  const auto in = random_inputs(g.m, 1, 8, 99);
  const auto out = model_forward(g.m, in);
  EXPECT_EQ(out[0].shape, (Shape{8, 4}));
}

TEST(ModelFloatOps, InputsAreChecked) {
  GraphBuilder g;
  const int x = g.input("feat", 4);
  g.output(g.linear("lin", x, 2));
  EXPECT_THROW(model_forward(g.m, {{{2, 3, 5}, std::vector<float>(30)}}), Error);
  std::vector<float> bad(24, 0.0f);
  bad[5] = NAN;
  try {
    model_forward(g.m, {{{2, 3, 4}, bad}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'feat' element 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fixq::test
