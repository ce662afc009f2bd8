// The quantized model file: a saved and loaded model gives the same bits as the one saved
// (forward, streams, info, the file's own bytes), and every truncation or corruption is a
// fixq::Error naming the file, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model_builder.h"

namespace fixq::test {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return (fs::path(::testing::TempDir()) / name).string(); }

std::vector<char> read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& p, const std::vector<char>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

QuantizedModel quantized(const Model& m, const char* preset, ScaleKind kind) {
  std::vector<std::vector<ModelArray>> calib;
  for (uint32_t s = 0; s < 2; ++s) calib.push_back(random_inputs(m, 3, 30, 50 + s));
  ModelQuantConfig c;
  c.preset = preset;
  c.scales = kind;
  // The format, not the quality: the observer's ranges. The search by output error chooses
  // other scales, which the file stores alike, and cost these sweeps minutes under the
  // sanitizers (171 s for the round trip).
  c.range_search = false;
  return QuantizedModel::quantize(m, calib, c);
}

// A tiny graph of every operator kind, for the fuzz seeds and the corruption sweeps.
Model tiny_model() {
  GraphBuilder g;
  const int x = g.input("x", 4);
  const int h0 = g.state_input("h0", 1, 4);
  const int c = g.unary("relu", ModelOp::Relu, g.conv("conv", x, 4, 3, 2, 2));
  int hn = -1;
  const int y = g.gru("gru", c, 4, 1, h0, &hn);
  const int t = g.unary("tanh", ModelOp::Tanh, g.linear("lin", y, 4));
  const int s = g.unary("sig", ModelOp::Sigmoid, g.slice("sl", t, 0, 2));
  const int cat = g.concat("cat", {s, g.slice("sl2", y, 1, 3)});
  const int add = g.binary("add", ModelOp::Add, cat, g.binary("mul", ModelOp::Mul, cat, g.unary("sig2", ModelOp::Sigmoid, cat)));
  g.output(g.unary("softmax", ModelOp::Softmax, add));
  g.output(hn);
  return g.m;
}

TEST(ModelFile, RoundTripGivesTheSameBits) {
  const std::vector<std::pair<std::string, Model>> graphs{
      {"rnnoise", rnnoise_like()}, {"glu", glu_model()}, {"reset_before", reset_before_model()},
      {"kws", kws_model()},        {"tiny", tiny_model()},
      {"kws_last_frame", kws_last_frame_model()}};
  for (const auto& [name, m] : graphs)
    for (auto [preset, kind] : {std::pair{"int8", ScaleKind::PowerOfTwo}, std::pair{"int16", ScaleKind::Multiplier}}) {
      const QuantizedModel q = quantized(m, preset, kind);
      const std::string p = temp_path("model_" + name + "_" + preset + ".fixq");
      q.save(p);
      const QuantizedModel l = QuantizedModel::load(p);
      EXPECT_EQ(l.info().to_string(), q.info().to_string()) << name;
      const auto in = random_inputs(m, 2, 17, 3);
      const auto a = q.forward(in), b = l.forward(in);
      ASSERT_EQ(a.size(), b.size());
      for (size_t o = 0; o < a.size(); ++o) EXPECT_EQ(a[o].data, b[o].data) << name << " " << preset << " output " << o;
      QuantizedModelStream sa(q, 2), sb(l, 2);
      for (int64_t t = 0; t < 5; ++t) {
        const auto f = frame_of(m, in, 2, 17, t);
        const auto oa = sa.step(f), ob = sb.step(f);
        for (size_t o = 0; o < oa.size(); ++o) ASSERT_EQ(oa[o].data, ob[o].data);
      }
      // Saving the loaded model writes the same bytes.
      const std::string p2 = p + ".again";
      l.save(p2);
      EXPECT_EQ(read_bytes(p), read_bytes(p2)) << name << " " << preset;
      // The loaded graph runs as a float model too (its weights dequantized).
      EXPECT_NO_THROW(model_forward(l.model(), in));
    }
}

void expect_error_naming_file(const std::string& p, const std::string& words = "") {
  try {
    QuantizedModel::load(p);
    FAIL() << p << " loaded";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    if (!words.empty()) {
      EXPECT_NE(msg.find(words), std::string::npos) << msg;
    }
  }
}

TEST(ModelFile, TruncatedFilesAreErrors) {
  const QuantizedModel q = quantized(tiny_model(), "int8", ScaleKind::PowerOfTwo);
  const std::string p = temp_path("model_tiny_trunc.fixq");
  q.save(p);
  const std::vector<char> bytes = read_bytes(p);
  const std::string cut = temp_path("model_cut.fixq");
  for (size_t n = 0; n < bytes.size(); n += std::max<size_t>(1, bytes.size() / 300)) {
    write_bytes(cut, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)));
    expect_error_naming_file(cut);
  }
}

TEST(ModelFile, CorruptedFilesLoadOrAreErrors) {
  const QuantizedModel q = quantized(tiny_model(), "int8", ScaleKind::Multiplier);  // 23 kB; int16's tables are 280 kB
  const std::string p = temp_path("model_tiny_corrupt.fixq");
  q.save(p);
  const std::vector<char> bytes = read_bytes(p);
  const std::string bad = temp_path("model_bad.fixq");
  int refused = 0, loaded = 0;
  // Every 5th byte of the header (the JSON), and 200 bytes spread over the tensors.
  uint64_t header = 0;
  for (int k = 7; k >= 0; --k) header = header << 8 | static_cast<unsigned char>(bytes[static_cast<size_t>(k)]);
  ASSERT_LT(header, bytes.size());
  std::vector<size_t> at;
  for (size_t i = 8; i < 8 + header; i += 5) at.push_back(i);
  const size_t data = 8 + header, span = bytes.size() - data;
  for (size_t k = 0; k < 200; ++k) at.push_back(data + span * k / 200);
  for (size_t i : at) {
    for (char flip : {char(0x01), char(0x40), char(0xff)}) {
      std::vector<char> b = bytes;
      b[i] = static_cast<char>(b[i] ^ flip);
      write_bytes(bad, b);
      try {
        const QuantizedModel l = QuantizedModel::load(bad);
        l.forward(random_inputs(l.model(), 1, 3, 1));  // whatever loads also runs
        ++loaded;
      } catch (const Error& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(loaded, 0);  // flips in weight bytes leave a valid model
}

TEST(ModelFile, MetadataErrorsSayWhat) {
  const QuantizedModel q = quantized(tiny_model(), "int8", ScaleKind::Multiplier);
  const std::string p = temp_path("model_meta.fixq");
  q.save(p);
  std::vector<char> bytes = read_bytes(p);
  const std::string text(bytes.begin(), bytes.end());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);  // same length: the header stays consistent
    EXPECT_EQ(from.size(), to.size());
    const std::string out = temp_path("model_meta_edit.fixq");
    write_bytes(out, std::vector<char>(t.begin(), t.end()));
    return out;
  };
  expect_error_naming_file(with("model-quantized", "model-quantizer"), "not a fixq quantized model");
  expect_error_naming_file(with("\"fixq.version\":\"1\"", "\"fixq.version\":\"3\""), "file version '3'");
  // Version 2 is the preset auto's (docs/spec.md 10.6): an int8 model claiming it is refused.
  expect_error_naming_file(with("\"fixq.version\":\"1\"", "\"fixq.version\":\"2\""), "cannot hold preset 'int8'");
  expect_error_naming_file(with("\\\"op\\\": \\\"relu\\\"", "\\\"op\\\": \\\"relx\\\""), "unknown model operator 'relx'");
  expect_error_naming_file(with("\\\"kernel\\\": 3", "\\\"kernel\\\": 4"), "tensor 'node0.weight' has shape");
  expect_error_naming_file(with("\\\"preset\\\": \\\"int8\\\"", "\\\"preset\\\": \\\"int9\\\""), "preset must be int8, int16 or auto");
  expect_error_naming_file(with("\\\"preset\\\": \\\"int8\\\"", "\\\"preset\\\": \\\"auto\\\""), "file version 1 cannot hold preset 'auto'");
}

// Writes the fuzz target's seed corpus (tests/fuzz/corpus/model/) when asked:
//   FIXQ_WRITE_MODEL_SEEDS=tests/fuzz/corpus/model build/bin/test_model --gtest_filter=*Seeds*
TEST(ModelFile, WritesFuzzSeedsWhenAsked) {
  const char* dir = std::getenv("FIXQ_WRITE_MODEL_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "FIXQ_WRITE_MODEL_SEEDS not set";
  fs::create_directories(dir);
  const Model tiny = tiny_model();
  GraphBuilder g;  // a second shape: time-major Linear + GLU
  const int x = g.input("x", 3, "TBC");
  const int h = g.linear("proj", x, 4);
  g.output(g.binary("glu", ModelOp::Mul, h, g.unary("gate", ModelOp::Sigmoid, g.linear("gl", h, 4, false))), "TBC");
  quantized(tiny, "int8", ScaleKind::PowerOfTwo).save((fs::path(dir) / "tiny_int8_pow2.fixq").string());
  quantized(g.m, "int8", ScaleKind::Multiplier).save((fs::path(dir) / "glu_int8_multiplier.fixq").string());
  // int16 (its tables interpolated); the tiny graph's int16 softmax table alone is 256 kB.
  quantized(g.m, "int16", ScaleKind::PowerOfTwo).save((fs::path(dir) / "glu_int16_pow2.fixq").string());
}

}  // namespace
}  // namespace fixq::test
