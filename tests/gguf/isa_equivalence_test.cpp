// Every fast path against the scalar reference, bit for bit: quantize on finite inputs
// of every scale (subnormal to FLT_MAX, ties, constant and one-hot blocks), dequantize and
// dot on arbitrary blocks (any quants, -128 included, inconsistent bsums, and some NaN /
// inf scales), block counts
// 0..n and misaligned buffers. The documented bound between the paths is 0, so NaN results
// are the only ones compared loosely (both NaN; a NaN's payload is not part of the contract).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "fixq/gguf.h"
#include "gguf_test_util.h"

namespace fixq::gguf {
namespace {

using test_util::bits;

// Block after block, each of a different kind, so every path sees every kind.
std::vector<float> hard_inputs(int64_t n, int64_t block, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const float scales[] = {1e-44f, 1e-40f, 3e-38f, 1e-30f, 1e-6f, 1.0f, 1e4f, 6e4f, 1e9f, 1e30f, 1e38f};
  std::vector<float> x(static_cast<std::size_t>(n));
  for (int64_t b = 0; b * block < n; ++b) {
    float* p = x.data() + b * block;
    const float s = scales[rng() % std::size(scales)];
    switch (rng() % 8) {
      case 0:  // gaussian at some scale (overflows clamped to the largest float)
        for (int64_t j = 0; j < block; ++j) p[j] = std::clamp(gauss(rng) * s, -FLT_MAX, FLT_MAX);
        break;
      case 1:  // constant
        for (int64_t j = 0; j < block; ++j) p[j] = s * ((rng() & 1) ? 1.0f : -1.0f) * 0.7f;
        break;
      case 2:  // zeros of both signs
        for (int64_t j = 0; j < block; ++j) p[j] = (rng() & 1) ? 0.0f : -0.0f;
        break;
      case 3:  // halves: ties for every rounding
        for (int64_t j = 0; j < block; ++j) p[j] = static_cast<float>(static_cast<int>(rng() % 255) - 127) + 0.5f;
        p[rng() % block] = (rng() & 1) ? 127.0f : -127.0f;
        break;
      case 4:  // one non-zero
        for (int64_t j = 0; j < block; ++j) p[j] = 0.0f;
        p[rng() % block] = std::clamp(gauss(rng) * s, -FLT_MAX, FLT_MAX);
        break;
      case 5:  // the largest floats, mixed signs
        for (int64_t j = 0; j < block; ++j) p[j] = (rng() & 1 ? 1.0f : -1.0f) * FLT_MAX * (static_cast<float>(rng() % 1001) / 1000.0f);
        break;
      case 6:  // equal magnitudes of both signs
        for (int64_t j = 0; j < block; ++j) p[j] = (rng() & 1 ? s : -s) * static_cast<float>(1 + rng() % 3);
        break;
      default:  // subnormals and tiny normals
        for (int64_t j = 0; j < block; ++j)
          p[j] = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000), -140 - static_cast<int>(rng() % 10));
        break;
    }
  }
  return x;
}

std::vector<std::byte> random_bytes(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() & 0xFF);
  return v;
}

// Arbitrary blocks of a format whose scale fields (offsets from the README of the golden
// vectors) are, in 7 blocks of 8, finite values of moderate size, so that most results are
// finite numbers rather than NaN; the eighth block keeps its random (often inf / NaN) bits.
std::vector<std::byte> random_blocks(Type type, int64_t blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  const TypeTraits& t = traits(type);
  std::vector<std::byte> v = random_bytes(static_cast<std::size_t>(blocks) * t.block_bytes, seed);
  std::vector<int> f16;
  switch (type) {
    case Type::Q4_1: case Type::Q5_1: case Type::Q8_1: case Type::Q4_K: case Type::Q5_K: f16 = {0, 2}; break;
    case Type::Q2_K: f16 = {80, 82}; break;
    case Type::Q3_K: f16 = {108}; break;
    case Type::Q6_K: f16 = {208}; break;
    case Type::TQ1_0: f16 = {52}; break;
    case Type::TQ2_0: f16 = {64}; break;
    case Type::Q8_K: case Type::MXFP4: case Type::NVFP4: break;  // NVFP4: every UE4M3 byte is finite
    default: f16 = {0}; break;
  }
  for (int64_t b = 0; b < blocks; ++b) {
    if (rng() % 8 == 0) continue;
    std::byte* p = v.data() + static_cast<std::size_t>(b) * t.block_bytes;
    for (int off : f16) {
      // sign, exponent 5..19 (2^-10 .. 2^4), any mantissa
      const auto h = static_cast<uint16_t>((rng() & 0x8000u) | ((5 + rng() % 15) << 10) | (rng() & 0x3FFu));
      std::memcpy(p + off, &h, sizeof h);
    }
    if (type == Type::Q8_K) {
      const float d = std::ldexp(static_cast<float>(rng() % 1000 + 1), -12 - static_cast<int>(rng() % 8));
      std::memcpy(p, &d, sizeof d);
    }
    if (type == Type::MXFP4) p[0] = static_cast<std::byte>(110 + rng() % 30);
  }
  return v;
}

// One byte past an aligned start, so that no block or float load is aligned.
struct Misaligned {
  explicit Misaligned(std::span<const std::byte> data) : buf(data.size() + 1) {
    if (!data.empty()) std::memcpy(buf.data() + 1, data.data(), data.size());
  }
  std::span<const std::byte> span() const { return std::span(buf).subspan(1); }
  std::vector<std::byte> buf;
};

bool same_float(float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

class IsaEquivalence : public ::testing::TestWithParam<fixq::test::KernelPath> {};

TEST_P(IsaEquivalence, QuantizeIsByteIdentical) {
  for (const TypeTraits& t : all_types()) {
    for (int64_t blocks : {0, 1, 2, 3, 7, 8, 9, 33}) {
      const int64_t n = blocks * t.block_elems;
      std::vector<float> x = hard_inputs(n, t.block_elems, static_cast<uint32_t>(blocks * 31 + t.ggml_type));
      x.insert(x.begin(), 0.0f);  // misalign the floats by one element
      const std::span<const float> in = std::span<const float>(x).subspan(1);
      std::vector<std::byte> want, got;
      {
        fixq::test::PathScope s(fixq::test::scalar_path());
        want = quantize(t.type, in);
      }
      {
        fixq::test::PathScope s(GetParam());
        got = quantize(t.type, in);
      }
      EXPECT_TRUE(want == got) << t.name << ", " << blocks << " blocks";
    }
  }
}

TEST_P(IsaEquivalence, DequantizeOfArbitraryBytesIsBitIdentical) {
  for (const TypeTraits& t : all_types()) {
    for (int64_t blocks : {0, 1, 5, 64}) {
      const Misaligned packed(random_blocks(t.type, blocks, 7u + static_cast<uint32_t>(blocks)));
      std::vector<float> want, got;
      {
        fixq::test::PathScope s(fixq::test::scalar_path());
        want = dequantize(t.type, packed.span());
      }
      {
        fixq::test::PathScope s(GetParam());
        got = dequantize(t.type, packed.span());
      }
      ASSERT_EQ(want.size(), got.size());
      int bad = 0;
      for (std::size_t i = 0; i < want.size(); ++i)
        if (!same_float(want[i], got[i]) && ++bad <= 3)
          ADD_FAILURE() << t.name << " element " << i << ": " << want[i] << " vs " << got[i];
    }
  }
}

TEST_P(IsaEquivalence, DotOfArbitraryBytesIsBitIdentical) {
  for (const TypeTraits& t : all_types()) {
    if (!t.dot_type) continue;
    for (int64_t blocks : {0, 1, 2, 3, 8, 9, 100}) {
      for (uint32_t seed = 0; seed < 20; ++seed) {
        // NVFP4 blocks of 64 pair with two Q8_0 blocks each.
        const int64_t y_blocks = blocks * t.block_elems / traits(*t.dot_type).block_elems;
        const Misaligned x(random_blocks(t.type, blocks, seed));
        const Misaligned y(random_blocks(*t.dot_type, y_blocks, seed + 1000));
        float want, got;
        {
          fixq::test::PathScope s(fixq::test::scalar_path());
          want = dot(t.type, x.span(), y.span());
        }
        {
          fixq::test::PathScope s(GetParam());
          got = dot(t.type, x.span(), y.span());
        }
        EXPECT_TRUE(same_float(want, got)) << t.name << ", " << blocks << " blocks, seed " << seed << ": " << want
                                           << " vs " << got;
      }
    }
  }
}

// Realistic operands too (the arbitrary bytes above are mostly huge or NaN scales).
TEST_P(IsaEquivalence, DotOfQuantizedDataIsBitIdentical) {
  std::mt19937 rng(5);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> a(256 * 40), b(256 * 40);
  for (float& v : a) v = gauss(rng);
  for (float& v : b) v = gauss(rng) * 3.0f;
  for (const TypeTraits& t : all_types()) {
    if (!t.dot_type) continue;
    std::optional<fixq::test::PathScope> scope(std::in_place, fixq::test::scalar_path());
    const std::vector<std::byte> x = quantize(t.type, a), y = quantize(*t.dot_type, b);
    const float want = dot(t.type, x, y);
    scope.reset();
    fixq::test::PathScope fast(GetParam());
    EXPECT_EQ(bits(want), bits(dot(t.type, x, y))) << t.name;
  }
}

// matvec (ggml's mul_mat with one activation row) against the reference dot, row by row:
// row counts around the AVX-512 kernels' 16- and 8-row tiles and their 4-, 2- and 1-row
// passes, block counts around their 16-block chunks (a short last chunk), misaligned
// operands.
TEST_P(IsaEquivalence, MatvecIsTheReferenceDotOfEveryRow) {
  for (const TypeTraits& t : all_types()) {
    if (!t.dot_type) continue;
    for (int64_t blocks : {1, 2, 15, 16, 17, 33}) {
      for (int64_t rows : {1, 3, 7, 8, 9, 17, 24}) {
        const uint32_t seed = static_cast<uint32_t>(blocks * 100 + rows);
        const int64_t y_blocks = blocks * t.block_elems / traits(*t.dot_type).block_elems;
        const Misaligned x(random_blocks(t.type, blocks * rows, seed));
        const Misaligned y(random_blocks(*t.dot_type, y_blocks, seed + 7));
        const std::size_t row_bytes = static_cast<std::size_t>(blocks) * t.block_bytes;
        std::vector<float> want(static_cast<std::size_t>(rows));
        {
          fixq::test::PathScope s(fixq::test::scalar_path());
          for (int64_t r = 0; r < rows; ++r)
            want[static_cast<std::size_t>(r)] = dot(t.type, x.span().subspan(static_cast<std::size_t>(r) * row_bytes, row_bytes), y.span());
        }
        std::vector<float> got;
        {
          fixq::test::PathScope s(GetParam());
          got = matvec(t.type, x.span(), rows, y.span());
        }
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t r = 0; r < want.size(); ++r)
          EXPECT_TRUE(same_float(want[r], got[r])) << t.name << ", " << blocks << " blocks, row " << r << " of " << rows
                                                   << ": " << want[r] << " vs " << got[r];
      }
    }
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(IsaEquivalence);
INSTANTIATE_TEST_SUITE_P(EveryFastIsa, IsaEquivalence, ::testing::ValuesIn(fixq::test::fast_paths()),
                         [](const ::testing::TestParamInfo<fixq::test::KernelPath>& i) { return i.param.name(); });

}  // namespace
}  // namespace fixq::gguf
