// Model::validate, operator names, and the float stream against whole sequences.
#include <gtest/gtest.h>

#include <cmath>

#include "model_builder.h"

namespace fixq::test {
namespace {

void expect_invalid(const Model& m, const std::string& words) {
  try {
    m.validate();
    FAIL() << "validate() accepted a graph that should fail with: " << words;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ModelGraph, OperatorNamesRoundTrip) {
  for (ModelOp op : {ModelOp::Linear, ModelOp::Conv1d, ModelOp::Gru, ModelOp::Add, ModelOp::Mul, ModelOp::Tanh,
                     ModelOp::Sigmoid, ModelOp::Relu, ModelOp::Concat, ModelOp::Slice, ModelOp::Softmax})
    EXPECT_EQ(parse_model_op(to_string(op)), op);
  EXPECT_THROW(parse_model_op("lstm"), Error);
  EXPECT_TRUE(ValueLayout::valid("BCT", ValueKind::Sequence));
  EXPECT_FALSE(ValueLayout::valid("SBH", ValueKind::Sequence));
  EXPECT_TRUE(ValueLayout::valid("SBH", ValueKind::State));
  EXPECT_FALSE(ValueLayout::valid("BTC", ValueKind::State));
}

TEST(ModelGraph, TestGraphsAreValid) {
  for (const Model& m : {rnnoise_like(), glu_model(), reset_before_model(), kws_model(), kws_last_frame_model()})
    EXPECT_NO_THROW(m.validate());
  const Model m = rnnoise_like();
  EXPECT_EQ(m.find_value("gru2.y"), m.nodes[5].outputs[0]);
  EXPECT_EQ(m.find_value("nothing"), -1);
}

TEST(ModelGraph, ValidateRejectsBrokenGraphs) {
  {  // a cycle: a node reads what a later node writes
    Model m = glu_model();
    std::swap(m.nodes[0], m.nodes[1]);
    expect_invalid(m, "no earlier node produces");
  }
  {  // a dangling input
    Model m = glu_model();
    m.nodes[2].inputs[0] = m.find_value("nothing") < 0 ? static_cast<int>(m.values.size()) : 0;
    expect_invalid(m, "outside");
  }
  {  // a value nobody produces
    Model m = glu_model();
    m.values.push_back({"orphan", ValueKind::Sequence, 3, 0, {}});
    expect_invalid(m, "'orphan' is neither produced");
  }
  {  // two producers
    Model m = glu_model();
    m.nodes[1].outputs[0] = m.nodes[0].outputs[0];
    expect_invalid(m, "another node writes");
  }
  {  // bad shapes
    Model m = glu_model();
    m.nodes[0].weight.pop_back();
    expect_invalid(m, "weight has");
    Model m2 = glu_model();
    m2.values[static_cast<size_t>(m2.nodes[0].outputs[0])].features = 31;
    expect_invalid(m2, "out_features");
    Model m3 = kws_model();
    m3.nodes[2].groups = 5;
    expect_invalid(m3, "groups");
    Model m4 = kws_model();
    m4.nodes.back().end = 13;
    expect_invalid(m4, "no slice");
  }
  {  // NaN weights, in a layer and in a GRU
    Model m = glu_model();
    m.nodes[1].weight[3] = NAN;
    expect_invalid(m, "not finite");
    Model m2 = kws_model();
    auto g = std::make_shared<GruModel>(*m2.nodes[3].gru);
    g->cells[0].R[7] = INFINITY;
    m2.nodes[3].gru = g;
    expect_invalid(m2, "node 'gru'");
  }
  {  // names and layouts
    Model m = glu_model();
    m.values[1].name = m.values[0].name;
    expect_invalid(m, "two values are named");
    Model m2 = glu_model();
    m2.values[static_cast<size_t>(m2.inputs[0])].layout.axes = "CTB";
    expect_invalid(m2, "layout 'CTB'");
    Model m3 = reset_before_model();
    m3.values[static_cast<size_t>(m3.inputs[1])].rows = 3;
    expect_invalid(m3, "must be a state [2, B, 32]");
  }
}

// Every frame of every output of a stream equals the whole-sequence forward, bit for bit.
void expect_stream_equals_forward(const Model& m, int64_t B, int64_t T) {
  const auto in = random_inputs(m, B, T, 5);
  const auto whole = model_forward(m, in);
  std::vector<ModelArray> states;
  for (size_t i = 0; i < m.inputs.size(); ++i)
    states.push_back(m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State ? in[i] : ModelArray{});
  ModelStream s(m, B, states);
  for (int64_t t = 0; t < T; ++t) {
    const auto out = s.step(frame_of(m, in, B, T, t));
    for (size_t o = 0; o < m.outputs.size(); ++o) {
      const ModelValue& v = m.values[static_cast<size_t>(m.outputs[o])];
      if (v.kind == ValueKind::State || v.layout.axes == "BC") {  // the state / the last frame: the stream's last step
        if (t == T - 1) {
          ASSERT_EQ(out[o].data, whole[o].data) << v.name;
        }
        continue;
      }
      ASSERT_EQ(out[o].data, output_frame(v, whole[o], B, T, t)) << v.name << " frame " << t;
    }
  }
}

TEST(ModelStreamFloat, EqualsWholeSequenceBitForBit) {
  expect_stream_equals_forward(rnnoise_like(), 2, 23);
  expect_stream_equals_forward(glu_model(), 3, 9);
  expect_stream_equals_forward(reset_before_model(), 2, 13);
  expect_stream_equals_forward(kws_model(), 1, 31);
  expect_stream_equals_forward(kws_last_frame_model(), 3, 19);
}

// A "BC" output is the value's last frame: [B, C], frame T - 1 of the same graph read as "BTC".
TEST(ModelGraph, LastFrameOutputIsFrameTMinus1) {
  const Model last = kws_last_frame_model();
  Model every = last;
  every.values[static_cast<size_t>(every.outputs[0])].layout.axes = "BTC";
  const int64_t B = 3, T = 21;
  const auto in = random_inputs(last, B, T, 9);
  const auto got = model_forward(last, in), all = model_forward(every, in);
  ASSERT_EQ(got[0].shape, (Shape{B, 12}));
  ASSERT_EQ(all[0].shape, (Shape{B, T, 12}));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < 12; ++c)
      ASSERT_EQ(got[0].data[static_cast<size_t>(b * 12 + c)], all[0].data[static_cast<size_t>((b * T + T - 1) * 12 + c)]);
  // The stream gives the current frame's posterior at every step: frame t of "BTC".
  ModelStream s(last, B);
  for (int64_t t = 0; t < T; ++t) {
    const auto out = s.step(frame_of(last, in, B, T, t));
    ASSERT_EQ(out[0].shape, (Shape{B, 12}));
    ASSERT_EQ(out[0].data, output_frame(every.values[static_cast<size_t>(every.outputs[0])], all[0], B, T, t)) << t;
  }
  // An input cannot be "BC"; T = 0 has no last frame.
  Model bad = last;
  bad.values[static_cast<size_t>(bad.inputs[0])].layout.axes = "BC";
  expect_invalid(bad, "only an output");
  EXPECT_THROW(model_forward(last, random_inputs(every, 2, 0, 1)), Error);
}

TEST(ModelStreamFloat, RefusesBidirectionalGru) {
  GraphBuilder g;
  const int x = g.input("x", 8);
  g.output(g.gru("bigru", x, 8, 1, -1, nullptr, true));
  EXPECT_NO_THROW(model_forward(g.m, random_inputs(g.m, 1, 4, 1)));
  try {
    ModelStream s(g.m, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bigru' is bidirectional"), std::string::npos) << e.what();
  }
}

TEST(ModelStreamFloat, FramesAreChecked) {
  const Model m = glu_model();
  ModelStream s(m, 2);
  EXPECT_THROW(s.step({{{3, 24}, std::vector<float>(72)}}), Error);
  std::vector<float> f(48, 0.0f);
  f[1] = INFINITY;
  EXPECT_THROW(s.step({{{2, 24}, f}}), Error);
}

}  // namespace
}  // namespace fixq::test
