// Bad input gets a clear fixq::Error naming what is wrong: lengths that are not whole
// blocks, NaN / infinity inside a block, truncated or oversized packed data (and .bin
// files), dot operands that do not pair, unknown type names. Blocks whose scale left the
// fp16 range are reproduced as ggml writes them and reported by first_invalid_block.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "fixq/gguf.h"
#include "fixq/encoded_file.h"
#include "gguf_test_util.h"

namespace fixq::gguf {
namespace {

using test_util::expect_error;

TEST(GgufBadInput, LengthNotAMultipleOfTheBlock) {
  for (const TypeTraits& t : all_types()) {
    const int64_t n = t.block_elems + 3;
    std::vector<float> x(static_cast<std::size_t>(n), 1.0f);
    expect_error([&] { quantize(t.type, x); }, std::string(t.name), std::to_string(n),
                 "multiple of " + std::to_string(t.block_elems));
    expect_error([&] { packed_size(t.type, -t.block_elems); }, std::to_string(-t.block_elems));
  }
}

TEST(GgufBadInput, ShapeWhoseLastDimensionIsNotWholeBlocks) {
  expect_error([] { packed_size(Type::Q4_K, Shape{256, 100}); }, "q4_K", "[256, 100]", "multiple of 256");
  expect_error([] { packed_size(Type::Q4_0, Shape{}); }, "scalar");
  EXPECT_EQ(packed_size(Type::Q4_0, Shape{3, 64}), 3u * 2u * 18u);
  EXPECT_EQ(packed_size(Type::Q4_0, Shape{0, 32}), 0u);
}

// The message names the element and its block; nothing is written.
TEST(GgufBadInput, NanOrInfinityInsideABlock) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const TypeTraits& t : all_types()) {
    for (const auto& [value, word] : {std::pair{nan, "NaN"}, std::pair{inf, "+inf"}, std::pair{-inf, "-inf"}}) {
      const int64_t n = 3 * t.block_elems, at = t.block_elems + 5;
      std::vector<float> x(static_cast<std::size_t>(n), 0.25f);
      x[static_cast<std::size_t>(at)] = value;
      std::vector<std::byte> out(packed_size(t.type, n), std::byte{0x5A});
      for (const fixq::test::KernelPath& path : fixq::test::kernel_paths()) {
        fixq::test::PathScope scope(path);
        expect_error([&] { quantize(t.type, x.data(), n, out.data()); }, std::string(t.name),
                     "element " + std::to_string(at), "block 1", word);
        for (std::byte b : out) ASSERT_EQ(b, std::byte{0x5A}) << t.name << " wrote output before failing";
      }
    }
  }
}

TEST(GgufBadInput, NullPointers) {
  expect_error([] { quantize(Type::Q8_0, nullptr, 32, nullptr); }, "null");
  const std::vector<std::byte> packed(18);
  expect_error([&] { dequantize(Type::Q4_0, packed, nullptr); }, "null");
}

TEST(GgufBadInput, MatvecOperandsThatDoNotPair) {
  const std::vector<std::byte> x(3 * 18), y(34);  // three q4_0 rows of 32 against one q8_0 block
  EXPECT_EQ(matvec(Type::Q4_0, x, 3, y).size(), 3u);
  expect_error([&] { matvec(Type::Q4_0, x, -1, y); }, "negative row count", "-1");
  expect_error([&] { matvec(Type::Q4_0, x, 2, y); }, "2 rows", "54 bytes");
  expect_error([&] { matvec(Type::Q4_0, std::span(x).first(53), 3, y); }, "3 rows", "53 bytes");
  expect_error([&] { matvec(Type::Q8_K, x, 3, y); }, "q8_K", "no dot product");
  expect_error([&] { matvec(Type::Q4_0, x, 3, y, nullptr); }, "null output");
  const std::vector<std::byte> q8_1(36);  // q4_1 pairs with q8_1, q4_0 with q8_0
  expect_error([&] { matvec(Type::Q4_0, x, 3, q8_1); }, "q8_0");
}

TEST(GgufBadInput, PackedBytesThatAreNotWholeBlocks) {
  const std::vector<std::byte> bytes(2 * 18 - 1);
  expect_error([&] { dequantize(Type::Q4_0, bytes); }, "35 bytes", "q4_0", "18 bytes each");
  expect_error([&] { first_invalid_block(Type::Q4_0, bytes); }, "35 bytes");
}

TEST(GgufBadInput, TruncatedOrOversizedTensorData) {
  const Shape shape{2, 256};
  for (const TypeTraits& t : all_types()) {
    const std::size_t want = packed_size(t.type, shape);
    const std::vector<std::byte> short_by_a_block(want - t.block_bytes), long_by_a_block(want + t.block_bytes);
    expect_error([&] { dequantize(t.type, short_by_a_block, shape); }, std::string(t.name), "truncated",
                 std::to_string(want));
    expect_error([&] { dequantize(t.type, long_by_a_block, shape); }, std::string(t.name), "oversized");
    EXPECT_EQ(dequantize(t.type, std::vector<std::byte>(want), shape).size(), 512u);
  }
}

// The .bin container (fixq/encoded_file.h) around a GGUF payload: cut short or extended, it
// is refused before any dequantization.
TEST(GgufBadInput, TruncatedOrOversizedBinFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("fixq_gguf_bin_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.bin").string();
  const std::vector<float> x(64, 0.5f);
  save_encoded(path, EncodedTensor{"q4_0", Shape{2, 32}, quantize(Type::Q4_0, x)});
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 1);
  expect_error([&] { load_encoded(path); }, "truncated");
  std::filesystem::resize_file(path, size + 1);
  expect_error([&] { load_encoded(path); }, path);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, DotOperandsThatDoNotPair) {
  const std::vector<float> x(512, 0.5f);
  const std::vector<std::byte> q4 = quantize(Type::Q4_0, x), q8 = quantize(Type::Q8_0, x);
  expect_error([&] { dot(Type::Q4_0, q4, std::span(q8).first(34)); }, "q4_0", "q8_0", "512 elements", "32");
  expect_error([&] { dot(Type::Q4_0, std::span(q4).first(17), q8); }, "17 bytes");
  expect_error([&] { dot(Type::Q8_1, q8, q8); }, "q8_1", "no dot product");
  expect_error([&] { dot(Type::Q8_K, q8, q8); }, "q8_K", "no dot product");
  EXPECT_EQ(dot(Type::Q4_0, {}, {}), 0.0f);
}

TEST(GgufBadInput, UnknownTypeNameListsTheKnownOnes) {
  expect_error([] { traits("q4_k"); }, "unknown GGUF type 'q4_k'", "q4_K", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0",
               "mxfp4", "nvfp4");
  expect_error([] { traits(""); }, "unknown GGUF type ''");
}

// ggml stores a scale beyond fp16 as infinity; fixq does the same (byte identity) and
// first_invalid_block reports it, as ggml_validate_row_data would.
TEST(GgufBadInput, ScalesBeyondFp16AreFoundByFirstInvalidBlock) {
  std::vector<float> x(64, 1.0f);
  x[40] = 1.0e6f;  // q4_0: d = -1e6 / 8 does not fit fp16
  const std::vector<std::byte> q = quantize(Type::Q4_0, x);
  EXPECT_EQ(first_invalid_block(Type::Q4_0, q), 1);
  EXPECT_TRUE(std::isinf(dequantize(Type::Q4_0, q)[40]) || std::isnan(dequantize(Type::Q4_0, q)[40]));
  EXPECT_EQ(first_invalid_block(Type::Q4_0, quantize(Type::Q4_0, std::vector<float>(64, 1.0f))), -1);
  // ggml's own inputs_b.q8_1.bin: row 5 (values ~1e4) overflows s = d * sum(q).
  const std::vector<std::byte> q8_1 = test_util::golden_bytes("inputs_b.q8_1.bin");
  const int64_t bad = first_invalid_block(Type::Q8_1, q8_1);
  EXPECT_EQ(bad / 8, 5) << "block " << bad;
  // Q8_K keeps a float32 scale; MXFP4's E8M0 exponent is always valid.
  std::vector<std::byte> k(292);
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(k.data(), &inf, sizeof inf);
  EXPECT_EQ(first_invalid_block(Type::Q8_K, k), 0);
  EXPECT_EQ(first_invalid_block(Type::MXFP4, std::vector<std::byte>(17, std::byte{0xFF})), -1);
}

// The formats added with ggml's later types: TQ1_0 / TQ2_0 store d = fp16(|x| max), which
// overflows beyond 65520; IQ4_XS stores d = fp16(-max_scale / 32), with max_scale about
// |x| max / 127, which overflows beyond about 32 * 127 * 65504 ~ 2.7e8; NVFP4's UE4M3 scales saturate
// at 448 (code 0x7E) instead, so every NVFP4 block is valid (even all-0xFF bytes).
TEST(GgufBadInput, ScalesBeyondFp16InTheLaterFormats) {
  std::vector<float> x(512, 1.0f);
  x[300] = 70000.0f;
  for (Type t : {Type::TQ1_0, Type::TQ2_0}) {
    const std::vector<std::byte> q = quantize(t, x);
    EXPECT_EQ(first_invalid_block(t, q), 1) << traits(t).name;
    EXPECT_TRUE(std::isinf(dequantize(t, q)[300])) << traits(t).name;
    EXPECT_EQ(first_invalid_block(t, quantize(t, std::vector<float>(512, 60000.0f))), -1) << traits(t).name;
  }
  x[300] = 1.0e9f;
  EXPECT_EQ(first_invalid_block(Type::IQ4_XS, quantize(Type::IQ4_XS, x)), 1);
  x[300] = 1.0e4f;  // amax / 6 > 448
  const std::vector<std::byte> nv = quantize(Type::NVFP4, x);
  EXPECT_EQ(first_invalid_block(Type::NVFP4, nv), -1);
  EXPECT_EQ(nv[4 * 36 + 2], std::byte{0x7E});  // element 300 = block 4, sub-block 2: scale saturated
  EXPECT_EQ(dequantize(Type::NVFP4, nv)[300], 6.0f * 448.0f);  // clipped to the largest value
  EXPECT_EQ(first_invalid_block(Type::NVFP4, std::vector<std::byte>(36, std::byte{0xFF})), -1);
}

}  // namespace
}  // namespace fixq::gguf
