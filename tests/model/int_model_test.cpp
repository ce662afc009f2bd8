// Whole quantized models: the test graphs in int8 and int16, power-of-two and multiplier
// scales, against the float reference (cosine, SNR), the integer stream against the
// whole-sequence integer forward bit for bit, forward against forward_raw.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <thread>

#include "model_builder.h"
#include "model_metrics.h"

namespace fixq::test {
namespace {

struct GraphCase {
  const char* name;
  std::function<Model()> make;
  double int8_cosine;  // the least output cosine int8 must reach (measured, with margin)
};

const GraphCase kGraphs[] = {
    {"rnnoise", rnnoise_like, 0.9999},
    {"glu", glu_model, 0.998},
    {"reset_before", reset_before_model, 0.999},
    {"kws", kws_model, 0.999},
    {"kws_last_frame", kws_last_frame_model, 0.999},
};


void expect_stream_equals_forward(const Model& m, const QuantizedModel& q, const std::vector<ModelArray>& in, int64_t B,
                                  int64_t T);

class QuantizedGraph : public ::testing::TestWithParam<std::tuple<int, const char*, ScaleKind>> {};

TEST_P(QuantizedGraph, CloseToFloatAndStreamsBitForBit) {
  const auto [gi, preset, kind] = GetParam();
  const GraphCase& gc = kGraphs[gi];
  const Model m = gc.make();
  const QuantizedModel q = QuantizedModel::quantize(m, calib_batches(m), quant_config(preset, kind));
  const int64_t B = 3, T = 37;
  const auto in = random_inputs(m, B, T, 7);
  const auto ref = model_forward(m, in);
  const auto got = q.forward(in);
  ASSERT_EQ(got.size(), ref.size());
  const bool int16 = std::string(preset) == "int16";
  for (size_t o = 0; o < ref.size(); ++o) {
    ASSERT_EQ(got[o].shape, ref[o].shape);
    const OutputError e = output_error(ref[o].data, got[o].data);
    std::printf("[measure] %s %s %s output %s: cosine %.7f SNR %.2f dB\n", gc.name, preset, to_string(kind).c_str(),
                m.values[static_cast<size_t>(m.outputs[o])].name.c_str(), e.cosine, e.snr_db);
    EXPECT_GE(e.cosine, int16 ? 0.9999 : gc.int8_cosine) << gc.name << " output " << o;
  }
  // forward = dequantize(forward_raw(quantize(inputs))), through the info's parameters.
  const QuantizedModelInfo info = q.info();
  std::vector<ModelIntArray> qin;
  for (size_t i = 0; i < in.size(); ++i) {
    const ModelValueQuant& p = info.values[static_cast<size_t>(m.inputs[i])];
    const ModelValue& v = m.values[static_cast<size_t>(m.inputs[i])];
    ModelIntArray a{in[i].shape, p.bits, {}};
    const size_t per_row = v.kind == ValueKind::State ? static_cast<size_t>(B * v.features) : in[i].data.size();
    for (size_t k = 0; k < in[i].data.size(); ++k)
      a.data.push_back(quantize_value(in[i].data[k], p.scale[k / per_row], p.zero_point[k / per_row], {p.qmin(), p.qmax()}));
    qin.push_back(a);
  }
  const auto raw = q.forward_raw(qin);
  for (size_t o = 0; o < raw.size(); ++o) {
    const ModelValueQuant& p = info.values[static_cast<size_t>(m.outputs[o])];
    const ModelValue& v = m.values[static_cast<size_t>(m.outputs[o])];
    const size_t per_row = v.kind == ValueKind::State ? static_cast<size_t>(B * v.features) : raw[o].data.size();
    for (size_t k = 0; k < raw[o].data.size(); ++k)
      ASSERT_EQ(got[o].data[k], dequantize_value(raw[o].data[k], p.scale[k / per_row], p.zero_point[k / per_row]));
  }
  // The integer stream: every frame equal to the whole-sequence forward, over T = 37 (one
  // pass) and T = 100, which forward runs as two chunks of 85 and 15 frames (kChunkRows = 256
  // rows at B = 3, int_forward.cpp), each carrying the state the stream carries frame by frame.
  for (const int64_t Ts : {T, int64_t{100}})
    expect_stream_equals_forward(m, q, Ts == T ? in : random_inputs(m, B, Ts, 8), B, Ts);
}

void expect_stream_equals_forward(const Model& m, const QuantizedModel& q, const std::vector<ModelArray>& in, int64_t B,
                                  int64_t T) {
  const auto got = q.forward(in);
  std::vector<ModelArray> states;
  for (size_t i = 0; i < m.inputs.size(); ++i)
    states.push_back(m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State ? in[i] : ModelArray{});
  QuantizedModelStream s(q, B, states);
  for (int64_t t = 0; t < T; ++t) {
    const auto out = s.step(frame_of(m, in, B, T, t));
    for (size_t o = 0; o < m.outputs.size(); ++o) {
      const ModelValue& v = m.values[static_cast<size_t>(m.outputs[o])];
      if (v.kind == ValueKind::State || v.layout.axes == "BC") {  // the state / the last frame: the stream's last step
        if (t == T - 1) {
          ASSERT_EQ(out[o].data, got[o].data) << v.name;
        }
        continue;
      }
      ASSERT_EQ(out[o].data, output_frame(v, got[o], B, T, t)) << v.name << " frame " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, QuantizedGraph,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3, 4), ::testing::Values("int8", "int16"),
                                            ::testing::Values(ScaleKind::PowerOfTwo, ScaleKind::Multiplier)),
                         [](const auto& info) {
                           return std::string(kGraphs[std::get<0>(info.param)].name) + "_" + std::get<1>(info.param) + "_" +
                                  to_string(std::get<2>(info.param));
                         });


// A bidirectional GRU (two layers) between Linear layers: whole sequences only.
TEST(QuantizedModelGraph, BidirectionalGruWholeSequenceOnly) {
  GraphBuilder g;
  const int x = g.input("x", 12);
  const int y = g.gru("bigru", g.linear("pre", x, 16), 20, 2, -1, nullptr, true);
  g.output(g.linear("post", y, 5));
  const auto calib = calib_batches(g.m);
  for (const char* preset : {"int8", "int16"}) {
    const QuantizedModel q = QuantizedModel::quantize(g.m, calib, quant_config(preset, ScaleKind::Multiplier));
    const auto in = random_inputs(g.m, 2, 25, 9);
    const OutputError e = output_error(model_forward(g.m, in)[0].data, q.forward(in)[0].data);
    std::printf("[measure] bigru %s multiplier: cosine %.7f SNR %.2f dB\n", preset, e.cosine, e.snr_db);
    EXPECT_GE(e.cosine, std::string(preset) == "int16" ? 0.9999 : 0.998);
    EXPECT_THROW(QuantizedModelStream(q, 1), Error);
  }
}

// One model, many threads: every thread gets the single-threaded bits.
TEST(QuantizedModelGraph, OneModelServesManyThreads) {
  const Model m = kws_model();
  const QuantizedModel q = QuantizedModel::quantize(m, calib_batches(m), quant_config("int8", ScaleKind::PowerOfTwo));
  const auto in = random_inputs(m, 2, 20, 4);
  const auto want = q.forward(in);
  std::vector<std::vector<ModelArray>> got(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      if (i % 2 == 0) {
        got[i] = q.forward(in);
        return;
      }
      QuantizedModelStream s(q, 2);  // streams of one model side by side
      std::vector<std::vector<float>> frames(m.outputs.size());
      for (int64_t t = 0; t < 20; ++t) {
        const auto out = s.step(frame_of(m, in, 2, 20, t));
        for (size_t o = 0; o < out.size(); ++o)
          if (m.values[static_cast<size_t>(m.outputs[o])].kind == ValueKind::Sequence) frames[o] = out[o].data;
      }
      for (size_t o = 0; o < frames.size(); ++o) got[i].push_back({{}, frames[o]});
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t o = 0; o < want.size(); ++o) {
      const ModelValue& v = m.values[static_cast<size_t>(m.outputs[o])];
      if (i % 2 == 0) {
        EXPECT_EQ(got[i][o].data, want[o].data) << "thread " << i;
      } else if (v.kind == ValueKind::Sequence) {
        EXPECT_EQ(got[i][o].data, output_frame(v, want[o], 2, 20, 19)) << "thread " << i;
      }
    }
}

TEST(QuantizedModelGraph, InputsAreChecked) {
  const Model m = glu_model();
  const QuantizedModel q = QuantizedModel::quantize(m, calib_batches(m), quant_config("int8", ScaleKind::PowerOfTwo));
  auto in = random_inputs(m, 1, 4, 2);
  in[0].data[3] = NAN;
  try {
    q.forward(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model input 'x' element 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(q.forward_raw({{{4, 1, 24}, 8, std::vector<int32_t>(96, 200)}}), Error);  // outside int8
  EXPECT_THROW(q.forward_raw({{{4, 1, 24}, 16, std::vector<int32_t>(96, 0)}}), Error);   // wrong bits
  ModelQuantConfig bad;
  bad.preset = "int4";
  EXPECT_THROW(QuantizedModel::quantize(m, calib_batches(m), bad), Error);
  EXPECT_THROW(QuantizedModel::quantize(m, {}, ModelQuantConfig{}), Error);
}

// info(): every operator with its bits, every graph input and output with its parameters.
TEST(QuantizedModelGraph, InfoListsOperatorsAndIoParameters) {
  const Model m = kws_model();
  for (const char* preset : {"int8", "int16"}) {
    ModelQuantConfig c = quant_config(preset, ScaleKind::Multiplier);
    c.range_search = false;  // what info lists, not which ranges: the search only moves the scales
    const QuantizedModel q = QuantizedModel::quantize(m, calib_batches(m), c);
    const QuantizedModelInfo info = q.info();
    const int bits = std::string(preset) == "int16" ? 16 : 8;
    ASSERT_EQ(info.ops.size(), m.nodes.size());
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      EXPECT_EQ(info.ops[n].name, m.nodes[n].name);
      const ModelOp op = m.nodes[n].op;
      EXPECT_EQ(info.ops[n].weight_bits, op == ModelOp::Linear || op == ModelOp::Conv1d || op == ModelOp::Gru ? 8 : 0);
    }
    for (int v : info.inputs) EXPECT_EQ(info.values[static_cast<size_t>(v)].bits, bits);
    const ModelValueQuant& probs = info.values[static_cast<size_t>(m.outputs[0])];
    EXPECT_EQ(probs.scale[0], bits == 16 ? 0x1p-15f : 0x1p-8f);  // softmax's fixed output (spec 10.2)
    EXPECT_EQ(probs.zero_point[0], bits == 16 ? 0 : -128);
    const std::string text = info.to_string();
    EXPECT_NE(text.find("input mfcc: int" + std::to_string(bits)), std::string::npos) << text;
    EXPECT_NE(text.find("softmax softmax: out int" + std::to_string(bits)), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace fixq::test
