// The float GRU model: operator names, validate(), the PyTorch and Haste imports (gate
// reordering checked on hand-made tensors), and the model file (round trip, every way a
// file can be wrong).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fixq/gru.h"
#include "fixq/safetensors.h"
#include "gru/float_test_util.h"
#include "io/npy_test_util.h"

namespace fixq {
namespace {

using gru_test::random_model;
using npy_test::expect_error;

void expect_same_model(const GruModel& a, const GruModel& b) {
  EXPECT_EQ(a.input_size, b.input_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.bidirectional, b.bidirectional);
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (std::size_t i = 0; i < a.cells.size(); ++i) {
    EXPECT_EQ(a.cells[i].input_size, b.cells[i].input_size);
    EXPECT_EQ(a.cells[i].hidden_size, b.cells[i].hidden_size);
    EXPECT_EQ(a.cells[i].W, b.cells[i].W) << i;
    EXPECT_EQ(a.cells[i].R, b.cells[i].R) << i;
    EXPECT_EQ(a.cells[i].bx, b.cells[i].bx) << i;
    EXPECT_EQ(a.cells[i].br, b.cells[i].br) << i;
  }
}

TEST(GruOp, NamesRoundTrip) {
  EXPECT_EQ(to_string(GruOp::RhAddBr), "Rh_add_br");
  EXPECT_EQ(to_string(GruOp::X), "x");
  EXPECT_EQ(parse_gru_op("new_contrib"), GruOp::NewContrib);
  for (int i = 0; i < kGruOpCount; ++i)
    EXPECT_EQ(static_cast<int>(parse_gru_op(to_string(static_cast<GruOp>(i)))), i);
  expect_error([] { parse_gru_op("z"); }, "unknown GRU operator 'z'", "z_pre", "old_contrib");
}

TEST(GruModelValidate, AcceptsAConsistentModelAndNamesEveryInconsistency) {
  const GruModel good = random_model(3, 4, 2, true, 1);
  good.validate();
  GruModel m = good;
  m.cells.pop_back();
  expect_error([&] { m.validate(); }, "3 cells, but 2 layers x 2 directions need 4");
  m = good;
  m.hidden_size = 0;
  expect_error([&] { m.validate(); }, "hidden_size 0");
  m = good;
  m.cells[2].input_size = 3;  // layer 1 reads both directions: 2H = 8
  expect_error([&] { m.validate(); }, "layer 1 forward", "input_size 3", "needs 8");
  m = good;
  m.cells[3].W.resize(5);
  expect_error([&] { m.validate(); }, "layer 1 reverse: W has 5 values, but [12, 8] needs 96");
  m = good;
  m.cells[1].br[7] = NAN;
  expect_error([&] { m.validate(); }, "layer 0 reverse: br[7]", "not finite");
}

// Sizes no model can have are errors before any product is formed: D * H for 2^62 used to
// overflow (undefined behaviour) inside the very check meant to refuse it.
TEST(GruModelValidate, SizesBeyondInt64AreErrors) {
  const int64_t huge = int64_t{1} << 62;
  expect_error([&] { GruModel{1, huge, 1, true, {}}.validate(); }, "more elements than fit in int64");
  expect_error([&] { GruModel{huge, 1, 1, false, {}}.validate(); }, "more elements than fit in int64");
}

// H = 1, C = 1, so each gate block is one row: torch's rows r, z, n become z, r, g.
TEST(GruFromTorch, ReordersGatesAndZeroesAbsentBiases) {
  const GruModel m = gru_from_torch({{"weight_ih_l0", {3, 1}, {1, 2, 3}},
                                     {"weight_hh_l0", {3, 1}, {4, 5, 6}},
                                     {"bias_hh_l0", {3}, {7, 8, 9}},
                                     {"weight_ih_l0_reverse", {3, 1}, {10, 11, 12}},
                                     {"weight_hh_l0_reverse", {3, 1}, {13, 14, 15}}});
  EXPECT_EQ(m.input_size, 1);
  EXPECT_EQ(m.hidden_size, 1);
  EXPECT_EQ(m.num_layers, 1);
  EXPECT_TRUE(m.bidirectional);
  EXPECT_EQ(m.cell(0, 0).W, (std::vector<float>{2, 1, 3}));
  EXPECT_EQ(m.cell(0, 0).R, (std::vector<float>{5, 4, 6}));
  EXPECT_EQ(m.cell(0, 0).bx, (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(m.cell(0, 0).br, (std::vector<float>{8, 7, 9}));
  EXPECT_EQ(m.cell(0, 1).W, (std::vector<float>{11, 10, 12}));
  EXPECT_EQ(m.cell(0, 1).br, (std::vector<float>{0, 0, 0}));
}

TEST(GruFromTorch, ReorderMovesWholeRowBlocks) {
  // H = 2, C = 2: rows 0-1 are r, 2-3 z, 4-5 n; each row [10 * row, 10 * row + 1].
  std::vector<float> w;
  for (int row = 0; row < 6; ++row) w.insert(w.end(), {10.0f * row, 10.0f * row + 1});
  const GruModel m = gru_from_torch({{"weight_ih_l0", {6, 2}, w}, {"weight_hh_l0", {6, 2}, w}});
  EXPECT_EQ(m.cell(0, 0).W, (std::vector<float>{20, 21, 30, 31, 0, 1, 10, 11, 40, 41, 50, 51}));
}

TEST(GruFromTorch, ToTorchIsTheInverse) {
  const GruModel m = random_model(3, 4, 3, true, 5);
  const std::vector<NamedTensor> sd = gru_to_torch(m);
  ASSERT_EQ(sd.size(), 24u);
  EXPECT_EQ(sd[0].name, "weight_ih_l0");
  EXPECT_EQ(sd[4].name, "weight_ih_l0_reverse");
  EXPECT_EQ(sd[9].shape, (Shape{12, 4}));  // weight_hh_l1
  EXPECT_EQ(sd[8].shape, (Shape{12, 8}));  // weight_ih_l1
  expect_same_model(gru_from_torch(sd), m);
}

TEST(GruFromTorch, NamesEveryProblem) {
  const std::vector<NamedTensor> good = gru_to_torch(random_model(3, 2, 2, true, 6));
  const auto with = [&](auto edit) {
    std::vector<NamedTensor> sd = good;
    edit(sd);
    return sd;
  };
  const auto find = [](std::vector<NamedTensor>& sd, const std::string& name) -> NamedTensor& {
    for (NamedTensor& t : sd)
      if (t.name == name) return t;
    throw std::runtime_error("no " + name);
  };
  const auto erase = [](std::vector<NamedTensor>& sd, const std::string& name) {
    std::erase_if(sd, [&](const NamedTensor& t) { return t.name == name; });
  };
  expect_error([&] { gru_from_torch(with([&](auto& sd) { find(sd, "weight_ih_l0").name = "gru.weight_ih_l0"; })); },
               "gru_from_torch", "unexpected tensor 'gru.weight_ih_l0'", "strip a module prefix");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { erase(sd, "weight_hh_l0"); })); },
               "missing tensor 'weight_hh_l0'");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { erase(sd, "weight_ih_l1_reverse"); })); },
               "missing tensor 'weight_ih_l1_reverse'");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { sd.push_back(sd[0]); })); },
               "two tensors are named 'weight_ih_l0'");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { find(sd, "weight_ih_l1").shape = {6, 3}; })); },
               "tensor 'weight_ih_l1' has 24 values, but its shape [6, 3] needs 18");
  expect_error([&] {
    gru_from_torch(with([&](auto& sd) {
      NamedTensor& t = find(sd, "weight_ih_l1");
      t.shape = {6, 3};
      t.data.resize(18);
    }));
  }, "tensor 'weight_ih_l1' has shape [6, 3], expected [6, 4]");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { find(sd, "weight_hh_l0").shape = {6, 4}; find(sd, "weight_hh_l0").data.resize(24); })); },
               "'weight_hh_l0' has shape [6, 4], expected [3 * hidden_size, hidden_size]");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { find(sd, "bias_hh_l1").data[2] = NAN; })); },
               "gru_from_torch", "layer 1 forward: br", "not finite");
  expect_error([&] { gru_from_torch(with([&](auto& sd) { find(sd, "bias_ih_l0").name = "bias_ih_l00"; })); },
               "unexpected tensor 'bias_ih_l00'");
  // An empty tensor may claim any other extent: [0, 2^62] holds no values, and 3 * 2^62
  // overflows, so the shape test divides instead of multiplying.
  expect_error([&] {
    gru_from_torch(with([&](auto& sd) {
      find(sd, "weight_hh_l0").shape = {0, int64_t{1} << 62};
      find(sd, "weight_hh_l0").data.clear();
    }));
  }, "'weight_hh_l0' has shape [0, 4611686018427387904], expected [3 * hidden_size, hidden_size]");
}

TEST(GruCellFromHaste, TransposesKernelsAndKeepsGateOrder) {
  // C = 2, H = 1: kernel [2, 3] columns z, r, g; fixq's W [3, 2] is its transpose.
  const GruCell c = gru_cell_from_haste({"kernel", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"recurrent_kernel", {1, 3}, {7, 8, 9}},
                                        {"bias", {3}, {10, 11, 12}}, {"recurrent_bias", {3}, {13, 14, 15}});
  EXPECT_EQ(c.input_size, 2);
  EXPECT_EQ(c.hidden_size, 1);
  EXPECT_EQ(c.W, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(c.R, (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(c.bx, (std::vector<float>{10, 11, 12}));
  EXPECT_EQ(c.br, (std::vector<float>{13, 14, 15}));
}

TEST(GruCellFromHaste, NamesEveryProblem) {
  const NamedTensor k{"kernel", {2, 3}, {1, 2, 3, 4, 5, 6}}, rk{"recurrent_kernel", {1, 3}, {7, 8, 9}},
      b{"bias", {3}, {1, 1, 1}}, rb{"recurrent_bias", {3}, {1, 1, 1}};
  expect_error([&] { gru_cell_from_haste(k, {"rk", {3, 1}, {1, 2, 3}}, b, rb); }, "gru_cell_from_haste",
               "'rk' has shape [3, 1], expected [hidden_size, 3 * hidden_size]");
  expect_error([&] { gru_cell_from_haste({"k", {3, 2}, {1, 2, 3, 4, 5, 6}}, rk, b, rb); },
               "'k' has shape [3, 2], expected [input_size, 3 * hidden_size] with hidden_size = 1");
  expect_error([&] { gru_cell_from_haste(k, rk, {"b", {4}, {1, 1, 1, 1}}, rb); }, "'b' has shape [4], expected [3]");
  expect_error([&] { gru_cell_from_haste(k, rk, b, {"rb", {3}, {1, 1}}); }, "'rb' has 2 values");
  expect_error([&] { gru_cell_from_haste({"kernel", {2, 3}, {1, 2, 3, 4, INFINITY, 6}}, rk, b, rb); },
               "gru_cell_from_haste", "W[3]", "not finite");
  expect_error([&] { gru_cell_from_haste(k, {"rk", {int64_t{1} << 62, 0}, {}}, b, rb); },
               "'rk' has shape [4611686018427387904, 0], expected [hidden_size, 3 * hidden_size]");
}

class GruModelFile : public npy_test::ScratchDir {
 protected:
  // Writes a model file with the state_dict of `m` edited by `edit` and the given metadata.
  std::string write(const std::vector<NamedTensor>& sd, const std::map<std::string, std::string>& metadata,
                    SafetensorsDtype dtype = SafetensorsDtype::F32) {
    std::vector<std::vector<uint16_t>> halves;
    std::vector<SafetensorsTensorView> views;
    for (const NamedTensor& t : sd) {
      if (dtype == SafetensorsDtype::F32) {
        views.push_back({t.name, dtype, t.shape, std::as_bytes(std::span(t.data))});
        continue;
      }
      // BF16: the upper half of each float (these test values are chosen exact in it).
      std::vector<uint16_t> h;
      for (const float v : t.data) h.push_back(static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16));
      halves.push_back(std::move(h));
    }
    for (std::size_t i = 0; i < halves.size(); ++i)
      views.push_back({sd[i].name, dtype, sd[i].shape, std::as_bytes(std::span(halves[i]))});
    save_safetensors(path("m.safetensors"), views, metadata);
    return path("m.safetensors");
  }

  static std::map<std::string, std::string> metadata_of(const GruModel& m) {
    return {{"fixq.format", "gru-float"},
            {"input_size", std::to_string(m.input_size)},
            {"hidden_size", std::to_string(m.hidden_size)},
            {"num_layers", std::to_string(m.num_layers)},
            {"bidirectional", m.bidirectional ? "true" : "false"}};
  }
};

TEST_F(GruModelFile, SaveAndLoadRoundTripExactly) {
  const GruModel m = random_model(5, 3, 2, true, 7);
  save_gru_float(path("m.safetensors"), m);
  expect_same_model(load_gru_float(path("m.safetensors")), m);
  const SafetensorsFile f(path("m.safetensors"));
  EXPECT_EQ(f.metadata(), metadata_of(m));
  EXPECT_EQ(f.tensors().size(), 16u);
  EXPECT_EQ(f.info("weight_ih_l1_reverse").shape, (Shape{9, 6}));
  EXPECT_EQ(f.info("bias_hh_l0").dtype, SafetensorsDtype::F32);
}

TEST_F(GruModelFile, ReadsOtherFloatDtypes) {
  GruModel m = random_model(2, 2, 1, false, 8);
  for (GruCell& c : m.cells)
    for (auto* v : {&c.W, &c.R, &c.bx, &c.br})
      for (float& x : *v) x = std::round(x * 64.0f) / 64.0f;  // exact in bfloat16
  expect_same_model(load_gru_float(write(gru_to_torch(m), metadata_of(m), SafetensorsDtype::BF16)), m);
}

TEST_F(GruModelFile, RefusesWrongFiles) {
  const GruModel m = random_model(3, 2, 2, false, 9);
  const std::vector<NamedTensor> sd = gru_to_torch(m);
  auto meta = metadata_of(m);
  meta.erase("fixq.format");  // without it, the file is a plain state_dict and loads as one
  expect_same_model(load_gru_float(write(sd, meta)), m);
  meta = metadata_of(m);
  meta["fixq.format"] = "gru-int";
  expect_error([&] { load_gru_float(write(sd, meta)); }, "load_gru_float", "m.safetensors",
               "not a float GRU model file", "\"fixq.format\" is \"gru-int\"");
  meta = metadata_of(m);
  meta["hidden_size"] = "3";
  expect_error([&] { load_gru_float(write(sd, meta)); }, "metadata \"hidden_size\" is \"3\" but the tensors say 2");
  meta = metadata_of(m);
  meta["num_layers"] = "+2";
  expect_error([&] { load_gru_float(write(sd, meta)); }, "\"num_layers\" is \"+2\", not a decimal size");
  meta = metadata_of(m);
  meta.erase("input_size");
  expect_error([&] { load_gru_float(write(sd, meta)); }, "metadata has no \"input_size\"");
  meta = metadata_of(m);
  meta["bidirectional"] = "yes";
  expect_error([&] { load_gru_float(write(sd, meta)); }, "\"bidirectional\" is \"yes\"");
  meta["bidirectional"] = "true";
  expect_error([&] { load_gru_float(write(sd, meta)); }, "\"bidirectional\" is \"true\" but the tensors say false");
  std::vector<NamedTensor> missing(sd.begin() + 1, sd.end());
  expect_error([&] { load_gru_float(write(missing, metadata_of(m))); }, "load_gru_float", "missing tensor 'weight_ih_l0'");
  std::vector<NamedTensor> extra = sd;
  extra.push_back({"fc.weight", {1}, {0.0f}});
  expect_error([&] { load_gru_float(write(extra, metadata_of(m))); }, "unexpected tensor 'fc.weight'");
}

// A plain state_dict whose recurrent weight is empty but claims a huge extent (a safetensors
// entry [0, 2^62] of no bytes): the module is told apart from a GRU, LSTM or RNN by division,
// never by 3 * 2^62, which overflows int64.
TEST_F(GruModelFile, EmptyTensorsWithHugeExtentsAreNotGrus) {
  const std::vector<NamedTensor> sd = {{"rnn.weight_hh_l0", {0, int64_t{1} << 62}, {}},
                                       {"rnn.weight_ih_l0", {0, 3}, {}}};
  expect_error([&] { load_gru_float(write(sd, {}), "rnn"); }, "load_gru_float", "the module at prefix 'rnn.' is not an "
               "nn.GRU: its weight_hh_l0 is [0, 4611686018427387904], not [3 * hidden, hidden]");
  expect_error([&] { load_gru_float(write(sd, {})); }, "no nn.GRU state_dict in this file");
}

TEST_F(GruModelFile, RefusesCorruptFiles) {
  const GruModel m = random_model(3, 2, 1, false, 10);
  save_gru_float(path("m.safetensors"), m);
  const std::string bytes = npy_test::read_bytes(path("m.safetensors"));
  npy_test::write_bytes(path("cut.safetensors"), bytes.substr(0, bytes.size() - 5));
  expect_error([&] { load_gru_float(path("cut.safetensors")); }, "safetensors", "cut.safetensors", "truncated");
  std::string flipped = bytes;
  flipped[flipped.find(':')] = '!';  // the JSON header's first colon
  npy_test::write_bytes(path("bad.safetensors"), flipped);
  expect_error([&] { load_gru_float(path("bad.safetensors")); }, "bad.safetensors", "not valid JSON");
  expect_error([&] { load_gru_float(path("none.safetensors")); }, "none.safetensors", "cannot open");
  GruModel broken = m;
  broken.cells[0].W[0] = NAN;
  expect_error([&] { save_gru_float(path("n.safetensors"), broken); }, "GRU model", "W[0]");
  EXPECT_FALSE(std::filesystem::exists(path("n.safetensors")));
}

}  // namespace
}  // namespace fixq
