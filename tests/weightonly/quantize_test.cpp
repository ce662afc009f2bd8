// PackedWeights::quantize: the per-group parameters and codes are fixq/quant.h's (per
// group along K, unsigned b-bit, never clipping), every weight is within half a step of
// its dequantized value, special groups behave, and bad sizes and values are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/weightonly.h"
#include "fixq/quant.h"

namespace fixq {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<float> random_weights(int64_t count, std::mt19937& rng) {
  std::vector<float> w(static_cast<size_t>(count));
  std::normal_distribution<float> d(0.0f, 0.05f);
  for (float& v : w) v = d(rng);
  return w;
}

TEST(PackedQuantize, MatchesFixqPerGroupQuantizationAndHalfStepError) {
  std::mt19937 rng(51);
  const int64_t k = 256, n = 40;
  const std::vector<float> w = random_weights(k * n, rng);
  for (const int bits : {2, 4, 8}) {
    for (const Symmetry sym : {Symmetry::Asymmetric, Symmetry::Symmetric}) {
      const int64_t g = 64;
      const PackedWeights p = PackedWeights::quantize(w.data(), k, n, GroupQuantSpec{bits, g, sym});
      QuantScheme s;
      s.format = IntFormat::make(bits, false);
      s.symmetry = sym;
      s.granularity = Granularity::PerGroup;
      s.group_size = g;
      const QuantParams params = params_from_tensor(w.data(), {k, n}, s);
      std::vector<uint8_t> q(static_cast<size_t>(k * n));
      quantize(w.data(), {k, n}, params, q.data());
      std::vector<float> deq(w.size());
      p.dequantize(deq.data());
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < n; ++c) {
          const size_t i = static_cast<size_t>(r * n + c), slot = static_cast<size_t>(r / g * n + c);
          ASSERT_EQ(p.code(r, c), q[i]) << bits << " bits, [" << r << ", " << c << "]";
          ASSERT_EQ(p.scale(r / g, c), params.scale[slot]);
          ASSERT_EQ(p.zero(r / g, c), params.zero_point[slot]);
          if (sym == Symmetry::Symmetric) {
            ASSERT_EQ(p.zero(r / g, c), 1 << (bits - 1));
          }
          const float step = params.scale[slot];
          ASSERT_LE(std::fabs(deq[i] - w[i]), step / 2 + std::fabs(deq[i]) * 0x1p-24f) << bits << " bits";
        }
      EXPECT_EQ(p.packed_bytes(), k * 64 * bits / 8 + 2 * (k / g) * 64 * 4);  // N padded to 64 columns
    }
  }
}

TEST(PackedQuantize, ZeroAndConstantGroups) {
  std::vector<float> w(64 * 8, 0.0f);
  for (int64_t r = 0; r < 32; ++r) w[static_cast<size_t>(r * 8 + 1)] = 0.5f;  // a constant group
  w[static_cast<size_t>(40 * 8 + 2)] = -3.0f;
  const PackedWeights p = PackedWeights::quantize(w.data(), 64, 8, GroupQuantSpec{4, 32, Symmetry::Asymmetric});
  std::vector<float> deq(w.size());
  p.dequantize(deq.data());
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0.0f) {
      EXPECT_EQ(deq[i], 0.0f) << i;  // zero is always exact
    }
  }
  EXPECT_EQ(deq[1], 0.5f);  // the range [0, 0.5] has 0.5 at a grid end
  EXPECT_EQ(deq[40 * 8 + 2], -3.0f);  // the range [-3, 0] has -3 at a grid end
}

TEST(PackedQuantize, ExportsToGptqAndImportsBackUnchanged) {
  std::mt19937 rng(52);
  const std::vector<float> w = random_weights(128 * 32, rng);
  const PackedWeights p = PackedWeights::quantize(w.data(), 128, 32, GroupQuantSpec{4, 32, Symmetry::Asymmetric});
  const PackedWeights back = import_gptq(export_gptq(p));
  std::vector<float> a(w.size()), b(w.size());
  p.dequantize(a.data());
  back.dequantize(b.data());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(back.act_order());
}

TEST(PackedQuantizeBadInput, SizesGroupsAndValues) {
  std::vector<float> w(96 * 8, 0.25f);
  auto q = [&](int bits, int64_t k, int64_t n, int64_t g) {
    return message_of([&] { PackedWeights::quantize(w.data(), k, n, GroupQuantSpec{bits, g, Symmetry::Asymmetric}); });
  };
  EXPECT_EQ(q(3, 96, 8, 32), "packed weights have 2, 4 or 8 bits, not 3");
  EXPECT_EQ(q(4, 0, 8, 32), "packed weights need K > 0 and N > 0, got K = 0, N = 8");
  EXPECT_EQ(q(4, 96, 8, 64), "group size 64 does not divide K = 96");
  EXPECT_EQ(q(4, 96, 8, 0), "group size 0 does not divide K = 96");
  EXPECT_EQ(q(2, 96, 8, 24), "group size 24 is not a multiple of 32 / 2 = 16: a packed int32 would straddle two groups");
  EXPECT_EQ(q(4, 96, 8, 12), "group size 12 is not a multiple of 32 / 4 = 8: a packed int32 would straddle two groups");
  EXPECT_EQ(q(8, 96, 8, 12), "(no error)");  // 12 is a multiple of 4
  w[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(q(4, 96, 8, 32).find("element 17"), std::string::npos);
  w[17] = std::numeric_limits<float>::infinity();
  EXPECT_NE(q(4, 96, 8, 32).find("element 17"), std::string::npos);
}

TEST(PackedFromPartsBadInput, CodesZerosAndSizes) {
  std::vector<uint8_t> q(32 * 4, 1);
  std::vector<float> s(4, 1.0f);
  std::vector<int32_t> z(4, 2);
  auto make = [&](int bits) { return message_of([&] { PackedWeights::from_parts(bits, 32, 4, q, s, z, {}); }); };
  EXPECT_EQ(make(4), "(no error)");
  q[9] = 16;
  EXPECT_EQ(make(4), "code 16 at [2, 1] does not fit in 4 bits");
  EXPECT_EQ(make(8), "(no error)");
  q[9] = 1;
  z[3] = 4;
  EXPECT_EQ(make(2), "zero point [0, 3] = 4 is outside [0, 3]");
  z[3] = -1;
  EXPECT_EQ(make(4), "zero point [0, 3] = -1 is outside [0, 15]");
  z[3] = 0;
  s.push_back(1.0f);
  EXPECT_EQ(make(4), "5 scales do not make [G, N = 4] with G >= 1");
  s.pop_back();
  q.pop_back();
  EXPECT_EQ(make(4), "127 codes for a [32, 4] weight");
  q.push_back(0);
  const std::vector<int32_t> g_idx(31, 0);
  EXPECT_EQ(message_of([&] { PackedWeights::from_parts(4, 32, 4, q, s, z, g_idx); }), "g_idx has 31 entries for K = 32 rows");
  const PackedWeights p = PackedWeights::from_parts(4, 32, 4, q, s, z, {});
  EXPECT_THROW(p.code(32, 0), Error);
  EXPECT_THROW(p.scale(1, 0), Error);
  EXPECT_THROW(p.group_of_row(-1), Error);
  EXPECT_THROW(p.dequantize(nullptr), Error);
}

}  // namespace
}  // namespace fixq
