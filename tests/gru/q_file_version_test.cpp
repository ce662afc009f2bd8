// The .fixq file stores the activation tables (version 2) and still reads version 1 files,
// which it completes by rebuilding their tables. The version 1 files of tests/gru/data were
// written by fixq before version 2 existed, with their outputs from `fixq gru run` of that
// time: loading them must give those outputs bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "fixq/error.h"
#include "fixq/npy.h"
#include "fixq/qgru.h"
#include "fixq/safetensors.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

const std::string kData = std::string(FIXQ_SOURCE_DIR) + "/tests/gru/data/";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("fixq_version_" + std::to_string(getpid()) + "_" + name)).string();
}

std::vector<float> run(const QuantizedGru& q, const std::string& x_path) {
  Shape s;
  const std::vector<float> x = load_npy_f32(x_path, &s);
  return q.forward(x.data(), s).y;
}

// A copy of a safetensors file with some tensors or metadata replaced.
void rewrite(const std::string& from, const std::string& to, const std::map<std::string, std::vector<int32_t>>& i32,
             const std::map<std::string, std::string>& meta_changes) {
  const SafetensorsFile f(from);
  std::vector<std::vector<std::byte>> bufs;
  bufs.reserve(f.tensors().size());
  std::vector<SafetensorsTensorView> views;
  for (const SafetensorsTensorInfo& t : f.tensors()) {
    const auto it = i32.find(t.name);
    if (it != i32.end()) {
      bufs.emplace_back(it->second.size() * 4);
      std::memcpy(bufs.back().data(), it->second.data(), bufs.back().size());
      views.push_back({t.name, SafetensorsDtype::I32, Shape{static_cast<int64_t>(it->second.size())}, bufs.back()});
    } else {
      bufs.push_back(f.read_raw(t.name));
      views.push_back({t.name, t.dtype, t.shape, bufs.back()});
    }
  }
  std::map<std::string, std::string> meta = f.metadata();
  for (const auto& [k, v] : meta_changes) meta[k] = v;
  save_safetensors(to, views, meta);
}

class FileVersion : public ::testing::TestWithParam<const char*> {};

TEST_P(FileVersion, Version1FilesLoadAsTheyRanAndRoundTripThroughVersion2) {
  const std::string name = GetParam();
  const std::string v1 = kData + name + ".fixq";
  {
    const SafetensorsFile f(v1);
    ASSERT_EQ(f.metadata().count("fixq.version"), 0u) << "the checked-in file must be a version 1 file";
    ASSERT_EQ(f.find("cell0.sig_z"), nullptr);
  }
  const QuantizedGru old = QuantizedGru::load(v1);
  const std::vector<float> want = load_npy_f32(kData + name + ".y.npy");
  const std::vector<float> y = run(old, kData + name + ".x.npy");
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want[i]) << name << " output " << i;

  // Saved again, the file is version 2 with every table as I32, and reads back the same.
  const std::string v2 = temp_path(name + ".fixq");
  old.save(v2);
  {
    const SafetensorsFile f(v2);
    EXPECT_EQ(f.metadata().at("fixq.version"), "2");
    const size_t cells = static_cast<size_t>(old.num_layers() * (old.bidirectional() ? 2 : 1));
    for (size_t c = 0; c < cells; ++c) {
      const auto luts = old.tables(c);
      const char* names[3] = {"sig_z", "sig_r", "tanh_g"};
      for (int t = 0; t < 3; ++t) {
        const std::string tn = "cell" + std::to_string(c) + "." + names[t];
        ASSERT_NE(f.find(tn), nullptr) << tn;
        EXPECT_EQ(f.info(tn).dtype, SafetensorsDtype::I32);
        const std::vector<int32_t> stored = f.read_i32(tn);
        const auto live = luts[static_cast<size_t>(t)]->table();
        EXPECT_EQ(stored, std::vector<int32_t>(live.begin(), live.end())) << tn;
      }
    }
  }
  const QuantizedGru back = QuantizedGru::load(v2);
  EXPECT_EQ(run(back, kData + name + ".x.npy"), y);
  std::remove(v2.c_str());
}

INSTANTIATE_TEST_SUITE_P(Data, FileVersion, ::testing::Values("v1-int16-2layer", "v1-int8-bidi"));

// The stored entries are the ones used: a table edited in the file changes the model.
TEST(FileVersion2, StoredTablesAreTheSourceOfTruth) {
  const QuantizedGru q = QuantizedGru::load(kData + "v1-int8-bidi.fixq");
  const std::string v2 = temp_path("truth.fixq"), edited = temp_path("edited.fixq");
  q.save(v2);
  const auto orig = q.tables(1)[2]->table();
  std::vector<int32_t> t(orig.begin(), orig.end());
  const int32_t old_entry = t[200];
  t[200] = old_entry == 0 ? 1 : 0;
  rewrite(v2, edited, {{"cell1.tanh_g", t}}, {});
  const QuantizedGru e = QuantizedGru::load(edited);
  EXPECT_EQ(e.tables(1)[2]->table()[200], t[200]);
  EXPECT_EQ((*e.tables(1)[2])(q.tables(1)[2]->input_min() + 200), t[200]);
  EXPECT_EQ(q.tables(1)[2]->table()[200], old_entry);
  std::remove(v2.c_str());
  std::remove(edited.c_str());
}

TEST(FileVersion2, BadTablesAndVersionsAreClearErrors) {
  const QuantizedGru q16 = QuantizedGru::load(kData + "v1-int16-2layer.fixq");
  const QuantizedGru q8 = QuantizedGru::load(kData + "v1-int8-bidi.fixq");
  const std::string a = temp_path("a.fixq"), b = temp_path("b.fixq"), bad = temp_path("bad.fixq");
  q16.save(a);
  q8.save(b);
  // An interpolated table whose knot count fits no step.
  rewrite(a, bad, {{"cell1.sig_r", std::vector<int32_t>(1000, 0)}}, {});
  expect_error([&] { QuantizedGru::load(bad); }, "cell1.sig_r", "1000 knots fit no interpolation step");
  // A direct table of the wrong size, and one with an entry outside the output range.
  rewrite(b, bad, {{"cell0.sig_z", std::vector<int32_t>(255, 0)}}, {});
  expect_error([&] { QuantizedGru::load(bad); }, "cell0.sig_z", "255 entries", "has 256");
  std::vector<int32_t> t(256, 0);
  t[17] = 300;
  rewrite(b, bad, {{"cell0.tanh_g", t}}, {});
  expect_error([&] { QuantizedGru::load(bad); }, "cell0.tanh_g", "entry 17 = 300", "outside the output range [-128, 127]");
  // A version this fixq does not know.
  rewrite(b, bad, {}, {{"fixq.version", "4"}});
  expect_error([&] { QuantizedGru::load(bad); }, "file version '4'", "1, 2 or 3");
  // Version 3 (the reset-before cell, reset_before_test.cpp) must name its cell.
  rewrite(b, bad, {}, {{"fixq.version", "3"}});
  expect_error([&] { QuantizedGru::load(bad); }, "version 3 file must name its cell", "'cell'");
  // A version 2 file that lacks a table.
  {
    const SafetensorsFile f(b);
    std::vector<std::vector<std::byte>> bufs;
    bufs.reserve(f.tensors().size());
    std::vector<SafetensorsTensorView> views;
    for (const SafetensorsTensorInfo& t2 : f.tensors()) {
      if (t2.name == "cell1.sig_r") continue;
      bufs.push_back(f.read_raw(t2.name));
      views.push_back({t2.name, t2.dtype, t2.shape, bufs.back()});
    }
    save_safetensors(bad, views, f.metadata());
  }
  expect_error([&] { QuantizedGru::load(bad); }, "cell1.sig_r");
  expect_error([&] { q8.tables(2); }, "cell 2 does not exist");
  for (const std::string& p : {a, b, bad}) std::remove(p.c_str());
}

}  // namespace
}  // namespace fixq
