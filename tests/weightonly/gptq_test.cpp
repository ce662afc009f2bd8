// GPTQ v1 import and export: tensors packed by the test exactly as v1 stores them (with
// and without act-order permutations) import to the layer they describe, export back to
// the same int32s, survive .npy files (float16 scales included), and corrupt tensors are
// clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>

#include "fixq/error.h"
#include "fixq/lowp.h"
#include "fixq/npy.h"
#include "gptq_fixture.h"

namespace fixq {
namespace {

using gptq_test::Layer;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_layer(const PackedWeights& w, const Layer& l) {
  ASSERT_EQ(w.bits(), l.bits);
  ASSERT_EQ(w.rows(), l.k);
  ASSERT_EQ(w.cols(), l.n);
  ASSERT_EQ(w.groups(), l.groups);
  std::vector<float> deq(static_cast<size_t>(l.k * l.n));
  w.dequantize(deq.data());
  for (int64_t r = 0; r < l.k; ++r) {
    const int32_t g = l.g_idx[static_cast<size_t>(r)];
    ASSERT_EQ(w.group_of_row(r), g) << "row " << r;
    for (int64_t c = 0; c < l.n; ++c) {
      const auto q = static_cast<int32_t>(l.q[static_cast<size_t>(r * l.n + c)]);
      ASSERT_EQ(w.code(r, c), static_cast<uint32_t>(q)) << r << ", " << c;
      const float s = l.scales[static_cast<size_t>(g * l.n + c)];
      const int32_t z = l.zeros[static_cast<size_t>(g * l.n + c)];
      ASSERT_EQ(w.scale(g, c), s);
      ASSERT_EQ(w.zero(g, c), z);
      ASSERT_EQ(deq[static_cast<size_t>(r * l.n + c)], static_cast<float>(q - z) * s) << r << ", " << c;
    }
  }
}

void expect_same_tensors(const GptqTensors& a, const GptqTensors& b) {
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.qweight_shape, b.qweight_shape);
  EXPECT_EQ(a.qweight, b.qweight);
  EXPECT_EQ(a.qzeros_shape, b.qzeros_shape);
  EXPECT_EQ(a.qzeros, b.qzeros);
  EXPECT_EQ(a.scales_shape, b.scales_shape);
  EXPECT_EQ(a.scales, b.scales);
  EXPECT_EQ(a.g_idx, b.g_idx);
}

struct Geometry {
  int bits;
  int64_t k, n, groups;
  bool act_order;
};

TEST(Gptq, ImportsWhatV1StoresAndExportsItBack) {
  std::mt19937 rng(31);
  for (const Geometry& g : {Geometry{4, 256, 64, 2, false}, Geometry{4, 256, 24, 4, true}, Geometry{2, 128, 48, 2, true},
                            Geometry{2, 64, 16, 1, false}, Geometry{8, 96, 12, 3, true}, Geometry{8, 128, 40, 4, false}}) {
    const Layer l = gptq_test::random_layer(g.bits, g.k, g.n, g.groups, g.act_order, rng);
    const GptqTensors t = gptq_test::pack_v1(l);
    const PackedWeights w = import_gptq(t);
    EXPECT_EQ(w.act_order(), g.act_order);
    expect_layer(w, l);
    expect_same_tensors(export_gptq(w), t);
  }
}

TEST(Gptq, StoredAllOnesZeroIsZero) {
  std::mt19937 rng(32);
  Layer l = gptq_test::random_layer(4, 64, 8, 1, false, rng);
  l.zeros.assign(l.zeros.size(), 0);  // v1 stores 0 - 1 = -1, i.e. 0xF in every nibble
  const GptqTensors t = gptq_test::pack_v1(l);
  EXPECT_EQ(static_cast<uint32_t>(t.qzeros[0]), 0xFFFFFFFFu);
  const PackedWeights w = import_gptq(t);
  EXPECT_EQ(w.zero(0, 3), 0);
  expect_same_tensors(export_gptq(w), t);
}

TEST(Gptq, MissingGIdxMeansConsecutiveGroups) {
  std::mt19937 rng(33);
  const Layer l = gptq_test::random_layer(4, 128, 16, 4, false, rng);
  GptqTensors t = gptq_test::pack_v1(l);
  t.g_idx.clear();
  expect_layer(import_gptq(t), l);
}

std::string temp_prefix(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("fixq_gptq_" + std::to_string(getpid()) + "_" + name + "_")).string();
}

TEST(Gptq, NpyFilesRoundTripWithFloat16Scales) {
  std::mt19937 rng(34);
  const Layer l = gptq_test::random_layer(4, 128, 16, 2, true, rng);  // scales 2^-e * (1 + i/1000)
  GptqTensors t = gptq_test::pack_v1(l);
  for (float& s : t.scales) s = lowp_decode(LowpType::Fp16, lowp_encode(LowpType::Fp16, s));  // as checkpoints hold them
  const std::string prefix = temp_prefix("f16");
  save_gptq_npy(prefix, t);
  EXPECT_EQ(load_npy(prefix + "scales.npy").dtype, "<f2");
  expect_same_tensors(load_gptq_npy(prefix, 4), t);
  // Scales that float16 cannot hold are kept as float32.
  t.scales[5] = 1.0f + 0x1p-20f;
  save_gptq_npy(prefix, t);
  EXPECT_EQ(load_npy(prefix + "scales.npy").dtype, "<f4");
  expect_same_tensors(load_gptq_npy(prefix, 4), t);
  // g_idx as int64, as torch.long tensors export.
  std::vector<int64_t> g64(t.g_idx.begin(), t.g_idx.end());
  save_npy_i64(prefix + "g_idx.npy", g64.data(), {static_cast<int64_t>(g64.size())});
  EXPECT_EQ(load_gptq_npy(prefix, 4).g_idx, t.g_idx);
  g64[3] = int64_t{1} << 40;
  save_npy_i64(prefix + "g_idx.npy", g64.data(), {static_cast<int64_t>(g64.size())});
  EXPECT_THROW(load_gptq_npy(prefix, 4), Error);
  // A qweight of the wrong dtype names its file.
  const std::vector<float> wrong(t.qweight.size());
  save_npy_f32(prefix + "qweight.npy", wrong.data(), t.qweight_shape);
  EXPECT_NE(message_of([&] { load_gptq_npy(prefix, 4); }).find("qweight.npy"), std::string::npos);
  for (const char* f : {"qweight.npy", "qzeros.npy", "scales.npy", "g_idx.npy"}) std::remove((prefix + f).c_str());
}

TEST(GptqBadInput, CorruptTensorsAreClearErrors) {
  std::mt19937 rng(35);
  const Layer l = gptq_test::random_layer(4, 128, 16, 2, false, rng);
  const GptqTensors good = gptq_test::pack_v1(l);
  auto with = [&](const std::function<void(GptqTensors&)>& corrupt) {
    GptqTensors t = good;
    corrupt(t);
    return message_of([&] { import_gptq(t); });
  };
  EXPECT_EQ(with([](GptqTensors& t) { t.bits = 3; }), "GPTQ bits must be 2, 4 or 8 here, not 3");
  EXPECT_EQ(with([](GptqTensors& t) { t.qweight.pop_back(); }), "GPTQ qweight of shape [16, 16] holds 255 values");
  EXPECT_EQ(with([](GptqTensors& t) { t.qweight_shape = {256}; }), "GPTQ qweight must have rank 2, has shape [256]");
  EXPECT_EQ(with([](GptqTensors& t) { t.bits = 8; }),  // the same int32s read as 8-bit: K = 64, qzeros too narrow
            "GPTQ qzeros of shape [2, 2] do not match [G, N * 8 / 32] = [2, 4]");
  EXPECT_EQ(with([](GptqTensors& t) { t.scales_shape = {1, 32}; }),
            "GPTQ scales of shape [1, 32] do not match qweight's N = 16 columns");
  EXPECT_EQ(with([](GptqTensors& t) { t.scales[7] = NAN; }), "scale [0, 7] = nan must be finite and > 0");
  EXPECT_EQ(with([](GptqTensors& t) { t.scales[17] = -1.0f; }), "scale [1, 1] = -1 must be finite and > 0");
  EXPECT_EQ(with([](GptqTensors& t) { t.scales[3] = 0.0f; }), "scale [0, 3] = 0 must be finite and > 0");
  EXPECT_EQ(with([](GptqTensors& t) { t.g_idx[9] = 2; }), "g_idx[9] = 2 is not a group in [0, 2)");
  EXPECT_EQ(with([](GptqTensors& t) { t.g_idx[9] = -1; }), "g_idx[9] = -1 is not a group in [0, 2)");
  EXPECT_EQ(with([](GptqTensors& t) { t.g_idx[100] = 0; }), "g_idx puts 65 rows in group 0, not K / G = 64");
  EXPECT_EQ(with([](GptqTensors& t) { t.g_idx.pop_back(); }), "g_idx has 127 entries for K = 128 rows");
  // An empty qweight may claim any other extent (a .npy of shape (2^62, 0) holds no data):
  // refused as empty before K = rows * 32 / bits is formed, which would overflow.
  EXPECT_EQ(with([](GptqTensors& t) {
              t.qweight_shape = {int64_t{1} << 62, 0};
              t.qweight.clear();
            }),
            "GPTQ qweight of shape [4611686018427387904, 0] is empty");
  // Groups that do not divide K, and groups that would split a packed int32.
  EXPECT_EQ(with([](GptqTensors& t) {
              t.scales_shape = {3, 16};
              t.scales.resize(48, 1.0f);
              t.qzeros_shape = {3, 2};
              t.qzeros.resize(6);
              t.g_idx.clear();
            }),
            "K = 128 rows do not split into G = 3 equal groups");
  EXPECT_EQ(with([](GptqTensors& t) {
              t.scales_shape = {32, 16};
              t.scales.resize(512, 1.0f);
              t.qzeros_shape = {32, 2};
              t.qzeros.resize(64);
              t.g_idx.clear();
            }),
            "group size 4 is not a multiple of 32 / 4 = 8: a packed int32 would straddle two groups");
  // N that qzeros cannot pack.
  Layer odd = gptq_test::random_layer(4, 64, 8, 1, false, rng);
  GptqTensors t = gptq_test::pack_v1(odd);
  t.qweight_shape = {4, 16};  // rows of 16 columns; 64 values
  t.qweight.resize(64);
  t.qzeros_shape = {1, 1};
  t.scales_shape = {1, 16};
  t.scales.resize(16, 1.0f);
  EXPECT_EQ(message_of([&] { import_gptq(t); }), "GPTQ qzeros of shape [1, 1] do not match [G, N * 4 / 32] = [1, 2]");
  t.qweight_shape = {6, 12};
  t.qweight.resize(72);
  t.scales_shape = {1, 12};
  t.scales.resize(12, 1.0f);
  EXPECT_EQ(message_of([&] { import_gptq(t); }), "GPTQ qzeros cannot pack N = 12 columns 8 per int32");
}

TEST(GptqBadInput, ExportNeedsPackableColumns) {
  std::mt19937 rng(36);
  Layer l = gptq_test::random_layer(4, 64, 12, 1, false, rng);  // N = 12: not a multiple of 8
  EXPECT_EQ(message_of([&] { export_gptq(gptq_test::to_packed(l)); }), "GPTQ qzeros cannot pack N = 12 columns 8 per int32");
}

}  // namespace
}  // namespace fixq
