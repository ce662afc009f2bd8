// quantize-stats (fixq/quantize_stats.h) against the same measurement made here directly:
// each tensor packed whole with gguf::quantize, unpacked with gguf::dequantize, and the
// pairs counted into ErrorStats; chunking must not change a single bucket or maximum.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "fixq/gguf.h"
#include "fixq/npy.h"
#include "fixq/quantize_stats.h"
#include "fixq/safetensors.h"
#include "support/expect.h"

namespace fixq {
namespace {

namespace fs = std::filesystem;

class QuantizeStatsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "fixq-qstats-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::vector<float> normal(std::size_t n, unsigned seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// The whole tensor through one type at once.
ErrorStats whole(gguf::Type type, const std::vector<float>& x) {
  std::vector<std::byte> packed(gguf::packed_size(type, static_cast<int64_t>(x.size())));
  gguf::quantize(type, x.data(), static_cast<int64_t>(x.size()), packed.data());
  std::vector<float> back(x.size());
  gguf::dequantize(type, packed, back.data());
  ErrorStats s;
  s.add(x.data(), back.data(), x.size());
  return s;
}

void expect_same(const ErrorStats& got, const ErrorStats& want, const std::string& what) {
  EXPECT_EQ(got.count(), want.count()) << what;
  EXPECT_EQ(got.maxerr(), want.maxerr()) << what;
  EXPECT_EQ(got.histogram(), want.histogram()) << what;
  EXPECT_NEAR(got.rmse(), want.rmse(), 1e-12 * want.rmse()) << what;
}

TEST_F(QuantizeStatsFiles, SafetensorsTensorsAreMeasuredAsWholeTensorPackingWouldBe) {
  // 3 x 2^16 + 256 values: several chunks, the last one partial.
  const std::vector<float> big = normal(3 * 65536 + 256, 1, 0.05f);
  const std::vector<float> small = normal(4 * 64, 2, 1.0f);
  const std::vector<float> odd = normal(3 * 48, 3, 1.0f);  // 48: no type's block divides it
  const std::vector<int32_t> ids(10, 7);
  save_safetensors(path("m.safetensors"),
                   {{"big", SafetensorsDtype::F32, {3 * 256 + 1, 256}, std::as_bytes(std::span(big))},
                    {"small", SafetensorsDtype::F32, {4, 64}, std::as_bytes(std::span(small))},
                    {"odd", SafetensorsDtype::F32, {3, 48}, std::as_bytes(std::span(odd))},
                    {"ids", SafetensorsDtype::I32, {10}, std::as_bytes(std::span(ids))}});
  const QuantizeStatsInput in(path("m.safetensors"));
  EXPECT_EQ(in.float_tensors(), 3u);
  EXPECT_EQ(in.float_values(), static_cast<int64_t>(big.size() + small.size() + odd.size()));
  EXPECT_EQ(in.skipped(), std::vector<std::string>{"ids I32"});
  EXPECT_TRUE(in.quantized().empty());

  QuantizeStatsOptions o;
  o.types = {"q4_0", "q4_K", "iq4_nl"};
  o.per_tensor = true;
  int64_t last_done = -1, last_total = -1, calls = 0;
  o.progress = [&](int64_t done, int64_t total) {
    EXPECT_GT(done, last_done);
    last_done = done, last_total = total;
    ++calls;
  };
  const std::vector<QuantizeStatsType> r = in.run(o);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(last_total, in.float_values() * 3);
  EXPECT_EQ(last_done, last_total) << "the progress reaches its total";
  EXPECT_GT(calls, 6) << "progress comes chunk by chunk";

  for (const QuantizeStatsType& t : r) {
    const std::string name(t.type->name);
    const bool k256 = t.type->block_elems == 256;
    // big always fits; small (rows of 64) only 32-blocks; odd (rows of 48) never.
    const std::vector<std::pair<std::string, const std::vector<float>*>> measured =
        k256 ? std::vector<std::pair<std::string, const std::vector<float>*>>{{"big", &big}}
             : std::vector<std::pair<std::string, const std::vector<float>*>>{{"big", &big}, {"small", &small}};
    ASSERT_EQ(t.tensors.size(), measured.size()) << name;
    ErrorStats all;
    for (std::size_t i = 0; i < measured.size(); ++i) {
      EXPECT_EQ(t.tensors[i].first, measured[i].first) << name;
      const ErrorStats want = whole(t.type->type, *measured[i].second);
      expect_same(t.tensors[i].second, want, name + "::" + measured[i].first);
      all.merge(want);
    }
    expect_same(t.total, all, name);
    EXPECT_EQ(t.skipped_tensors, k256 ? 2 : 1) << name;
    EXPECT_EQ(t.skipped_values, static_cast<int64_t>(odd.size() + (k256 ? small.size() : 0))) << name;
  }
}

TEST_F(QuantizeStatsFiles, ANpyFileIsOneTensor) {
  const std::vector<float> x = normal(8 * 32, 4, 0.3f);
  save_npy_f32(path("x.npy"), x.data(), {8, 32});
  const QuantizeStatsInput in(path("x.npy"));
  EXPECT_EQ(in.float_tensors(), 1u);
  QuantizeStatsOptions o;
  o.types = {"q8_0"};
  const std::vector<QuantizeStatsType> r = in.run(o);
  ASSERT_EQ(r.size(), 1u);
  expect_same(r[0].total, whole(gguf::Type::Q8_0, x), "q8_0");
  EXPECT_TRUE(r[0].tensors.empty()) << "per-tensor statistics only when asked";
}

// bf16 rounds each value to nearest even on its own: the oracle rounds the float's bits
// with the textbook carry (add 0x7FFF plus the kept lowest bit, drop 16 bits), no fixq code.
TEST_F(QuantizeStatsFiles, Bf16IsMeasuredValueByValue) {
  const std::vector<float> x = normal(3 * 17, 6, 2.0f);  // rows of 17: no GGUF block fits
  save_npy_f32(path("x.npy"), x.data(), {3, 17});
  QuantizeStatsOptions o;
  o.types = {"bf16", "q8_0"};
  const std::vector<QuantizeStatsType> r = QuantizeStatsInput(path("x.npy")).run(o);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "bf16");
  EXPECT_EQ(r[0].type, nullptr);
  EXPECT_EQ(r[0].skipped_tensors, 0);
  std::vector<float> back(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &x[i], 4);
    bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
    std::memcpy(&back[i], &bits, 4);
  }
  ErrorStats want;
  want.add(x.data(), back.data(), x.size());
  expect_same(r[0].total, want, "bf16");
  EXPECT_EQ(r[1].name, "q8_0");
  EXPECT_EQ(r[1].total.count(), 0u) << "rows of 17 hold no q8_0 block";
  EXPECT_EQ(r[1].skipped_tensors, 1);
}

TEST_F(QuantizeStatsFiles, RefusesWhatItCannotMeasure) {
  std::vector<float> x = normal(64, 5, 1.0f);
  x[37] = NAN;
  save_npy_f32(path("nan.npy"), x.data(), {2, 32});
  const QuantizeStatsInput in(path("nan.npy"));
  QuantizeStatsOptions o;
  o.types = {"q4_0"};
  test::expect_error([&] { in.run(o); }, "element 37", "NaN");
  o.types = {"q9_9"};
  test::expect_error([&] { in.run(o); }, "q9_9");

  const std::vector<float> huge(32, 1e30f);
  save_npy_f32(path("huge.npy"), huge.data(), {1, 32});
  o.types = {"q4_0"};
  test::expect_error([&] { QuantizeStatsInput(path("huge.npy")).run(o); }, "fp16 range");

  std::ofstream(path("junk.bin")) << "not a tensor file";
  test::expect_error([&] { QuantizeStatsInput{path("junk.bin")}; }, "junk.bin", "neither");
}

}  // namespace
}  // namespace fixq
