// Whole quantized models: the test graphs in int8 and int16, power-of-two and multiplier
// scales, against the float reference (cosine, SNR), the integer stream against the
// whole-sequence integer forward bit for bit, forward against forward_raw.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

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
};

std::vector<std::vector<ModelArray>> calib_batches(const Model& m) {
  std::vector<std::vector<ModelArray>> b;
  for (uint32_t s = 0; s < 4; ++s) b.push_back(random_inputs(m, 4, 40, 100 + s));
  return b;
}

ModelQuantConfig config(const char* preset, ScaleKind kind) {
  ModelQuantConfig c;
  c.preset = preset;
  c.scales = kind;
  return c;
}

class QuantizedGraph : public ::testing::TestWithParam<std::tuple<int, const char*, ScaleKind>> {};

TEST_P(QuantizedGraph, CloseToFloatAndStreamsBitForBit) {
  const auto [gi, preset, kind] = GetParam();
  const GraphCase& gc = kGraphs[gi];
  const Model m = gc.make();
  const QuantizedModel q = QuantizedModel::quantize(m, calib_batches(m), config(preset, kind));
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
  // The integer stream: every frame equal to the whole-sequence forward.
  std::vector<ModelArray> states;
  for (size_t i = 0; i < m.inputs.size(); ++i)
    states.push_back(m.values[static_cast<size_t>(m.inputs[i])].kind == ValueKind::State ? in[i] : ModelArray{});
  QuantizedModelStream s(q, B, states);
  for (int64_t t = 0; t < T; ++t) {
    const auto out = s.step(frame_of(m, in, B, T, t));
    for (size_t o = 0; o < m.outputs.size(); ++o) {
      const ModelValue& v = m.values[static_cast<size_t>(m.outputs[o])];
      if (v.kind == ValueKind::State) {
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
                         ::testing::Combine(::testing::Values(0, 1, 2, 3), ::testing::Values("int8", "int16"),
                                            ::testing::Values(ScaleKind::PowerOfTwo, ScaleKind::Multiplier)),
                         [](const auto& info) {
                           return std::string(kGraphs[std::get<0>(info.param)].name) + "_" + std::get<1>(info.param) + "_" +
                                  to_string(std::get<2>(info.param));
                         });

}  // namespace
}  // namespace fixq::test
