// load_gru_onnx on crafted models: sizes and graph shapes that fuzzing (scripts/fuzz.sh,
// target onnx_gru) showed to reach undefined behaviour or protobuf's own CHECKs, each now a
// fixq::Error naming what is wrong. The models are written here in protobuf's wire format
// by hand (field numbers of onnx.proto), so the tests need neither protoc nor onnx's headers;
// a model that loads shows the writer right.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/gru.h"
#include "io/npy_test_util.h"

namespace fixq {
namespace {

using npy_test::expect_error;

// One protobuf message: varint and length-delimited fields, which is all ONNX models use
// here (int64 fields as varints, negative ones in ten bytes as protobuf writes them).
class Pb {
 public:
  Pb& i(int field, int64_t v) {
    key(field, 0);
    varint(static_cast<uint64_t>(v));
    return *this;
  }
  Pb& s(int field, std::string_view bytes) {
    key(field, 2);
    varint(bytes.size());
    b_.append(bytes);
    return *this;
  }
  Pb& m(int field, const Pb& message) { return s(field, message.b_); }
  const std::string& bytes() const { return b_; }

 private:
  void key(int field, int wire) { varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      b_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    b_ += static_cast<char>(v);
  }
  std::string b_;
};

// onnx.proto: TensorProto dims 1, data_type 2, name 8, raw_data 9 (FLOAT = 1, INT64 = 7).
Pb tensor(const std::string& name, const std::vector<int64_t>& dims, int type, const std::string& raw) {
  Pb t;
  for (int64_t d : dims) t.i(1, d);
  t.i(2, type).s(8, name).s(9, raw);
  return t;
}

Pb floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  std::string raw(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());
  return tensor(name, dims, 1, raw);
}

Pb int64s(const std::string& name, const std::vector<int64_t>& v) {
  std::string raw(v.size() * 8, '\0');
  if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());
  return tensor(name, {static_cast<int64_t>(v.size())}, 7, raw);
}

// AttributeProto: name 1, i 3, s 4, ints 8, type 20 (INT = 2, STRING = 3, INTS = 7).
Pb int_attr(const std::string& name, int64_t v) { return Pb().s(1, name).i(3, v).i(20, 2); }
Pb string_attr(const std::string& name, const std::string& v) { return Pb().s(1, name).s(4, v).i(20, 3); }
Pb ints_attr(const std::string& name, const std::vector<int64_t>& v) {
  Pb a;
  a.s(1, name);
  for (int64_t x : v) a.i(8, x);
  return a.i(20, 7);
}

// NodeProto: input 1, output 2, name 3, op_type 4, attribute 5.
Pb node(const std::string& op, const std::string& name, const std::vector<std::string>& in,
        const std::vector<std::string>& out, const std::vector<Pb>& attributes = {}) {
  Pb n;
  for (const std::string& x : in) n.s(1, x);
  for (const std::string& x : out) n.s(2, x);
  n.s(3, name).s(4, op);
  for (const Pb& a : attributes) n.m(5, a);
  return n;
}

// ModelProto: ir_version 1, graph 7 (GraphProto: node 1, initializer 5).
std::string model(const std::vector<Pb>& nodes, const std::vector<Pb>& initializers) {
  Pb g;
  for (const Pb& n : nodes) g.m(1, n);
  for (const Pb& t : initializers) g.m(5, t);
  return Pb().i(1, 7).m(7, g).bytes();
}

// A GRU node of hidden size H over X, with the weights W, R of the initializers.
Pb gru(const std::string& name, const std::string& x, const std::string& y, const std::vector<Pb>& extra = {}) {
  std::vector<Pb> attributes = {int_attr("linear_before_reset", 1)};
  attributes.insert(attributes.end(), extra.begin(), extra.end());
  return node("GRU", name, {x, "W", "R"}, {y}, attributes);
}

class OnnxGru : public npy_test::ScratchDir {
 protected:
  void SetUp() override {
    if (!onnx_supported()) GTEST_SKIP() << "fixq was built without ONNX (FIXQ_ONNX=OFF)";
    ScratchDir::SetUp();
  }
  std::string write(const std::string& bytes) {
    npy_test::write_bytes(path("m.onnx"), bytes);
    return path("m.onnx");
  }
  // W [1, 3, 1] and R [1, 3, 1]: C = H = 1.
  const std::vector<Pb> weights_ = {floats("W", {1, 3, 1}, {0.1f, 0.2f, 0.3f}), floats("R", {1, 3, 1}, {0.4f, 0.5f, 0.6f})};
};

// The writer above is right: one GRU, and two torch-style layers joined by Transpose + Reshape.
TEST_F(OnnxGru, HandWrittenModelsLoad) {
  const GruModel one = load_gru_onnx(write(model({gru("/GRU", "X", "Y")}, weights_)));
  EXPECT_EQ(one.input_size, 1);
  EXPECT_EQ(one.hidden_size, 1);
  EXPECT_EQ(one.num_layers, 1);
  EXPECT_EQ(one.cells.at(0).R, (std::vector<float>{0.4f, 0.5f, 0.6f}));
  std::vector<Pb> init = weights_;
  init.push_back(int64s("shape", {0, 0, -1}));
  const GruModel two = load_gru_onnx(write(model({gru("/GRU", "X", "Y"), node("Transpose", "/T", {"Y"}, {"Yt"}, {ints_attr("perm", {0, 2, 1, 3})}),
                                                  node("Reshape", "/Reshape", {"Yt", "shape"}, {"X1"}), gru("/GRU_1", "X1", "Y1")},
                                                 init)));
  EXPECT_EQ(two.num_layers, 2);
}

// Fuzzing found a Transpose whose perm attribute was renamed: the join check then read the
// node's input -1 (protobuf: "CHECK failed: (index) >= (0)", which the CLI reported as an
// internal error). Without perm, ONNX's Transpose reverses the axes: no layer join, so the
// model holds two GRUs.
TEST_F(OnnxGru, TransposeWithoutPermIsNoLayerJoin) {
  std::vector<Pb> init = weights_;
  init.push_back(int64s("shape", {0, 0, -1}));
  for (const std::vector<Pb>& attributes : {std::vector<Pb>{}, std::vector<Pb>{ints_attr("perX", {0, 2, 1, 3})}}) {
    const std::string m = model({gru("/GRU", "X", "Y"), node("Transpose", "/T", {"Y"}, {"Yt"}, attributes),
                                 node("Reshape", "/Reshape", {"Yt", "shape"}, {"X1"}), gru("/GRU_1", "X1", "Y1")},
                                init);
    expect_error([&] { load_gru_onnx(write(m)); }, "load_gru_onnx", "m.onnx", "the model holds 2 separate GRUs");
  }
  // An attribute with an empty name is no Reshape shape either (the shape is its input 1).
  std::vector<Pb> no_shape = weights_;
  const std::string m = model({gru("/GRU", "X", "Y"), node("Transpose", "/T", {"Y"}, {"Yt"}, {ints_attr("perm", {0, 2, 1, 3})}),
                               node("Reshape", "/Reshape", {"Yt"}, {"X1"}, {ints_attr("", {0, 0, -1})}), gru("/GRU_1", "X1", "Y1")},
                              no_shape);
  expect_error([&] { load_gru_onnx(write(m)); }, "the model holds 2 separate GRUs");
}

// Element counts that fit int64 whose byte counts do not: 3 C = 2^62 + 2 floats take
// 2^64 + 8 bytes, which wrapped in uint64 to 8 and matched an 8-byte raw_data (the loader
// then asked for a vector of 2^62 floats: std::length_error, not a fixq::Error).
TEST_F(OnnxGru, ByteCountsBeyondInt64AreErrors) {
  const int64_t C = ((int64_t{1} << 62) + 2) / 3;
  const std::string m = model({gru("/GRU", "X", "Y")}, {tensor("W", {1, 3, C}, 1, std::string(8, '\0')),
                                                        floats("R", {1, 3, 1}, {0.4f, 0.5f, 0.6f})});
  expect_error([&] { load_gru_onnx(write(m)); }, "GRU node '/GRU' W 'W': the byte count of 4611686018427387906 values of "
               "FLOAT overflows int64 (4611686018427387906 * 4)");
}

// Shape tests on extents that would overflow when multiplied: R [1, 1, 2^62] is not
// [D, 3 H, H] (3 * 2^62 overflows), and a hidden_size of 2^62 on two bidirectional layers
// does not match a Reshape to D * H (2 * 2^62 overflows): each a plain "no", never a wrap.
TEST_F(OnnxGru, ShapeTestsDoNotOverflow) {
  const std::string r = model({gru("/GRU", "X", "Y")}, {floats("W", {1, 3, 1}, {0.1f, 0.2f, 0.3f}),
                                                        tensor("R", {1, 1, int64_t{1} << 62}, 1, "")});
  expect_error([&] { load_gru_onnx(write(r)); }, "R 'R' has shape [1, 1, 4611686018427387904], expected [1, 3 * hidden_size, hidden_size]");
  std::vector<Pb> init = weights_;
  init.push_back(int64s("shape", {0, 0, 4}));
  const std::vector<Pb> bidi = {string_attr("direction", "bidirectional"), int_attr("hidden_size", int64_t{1} << 62)};
  const std::string h = model({gru("/GRU", "X", "Y", bidi), node("Transpose", "/T", {"Y"}, {"Yt"}, {ints_attr("perm", {0, 2, 1, 3})}),
                               node("Reshape", "/Reshape", {"Yt", "shape"}, {"X1"}), gru("/GRU_1", "X1", "Y1", bidi)},
                              init);
  expect_error([&] { load_gru_onnx(write(h)); }, "the model holds 2 separate GRUs");
}

}  // namespace
}  // namespace fixq
