// GGUF files: a header built byte by byte from the spec (independent of fixq's writer),
// ggml's golden dequantized bits read through a GGUF file, round trips of every value type
// and every tensor type, and every kind of corrupt or truncated file refused by name.
#include "fixq/gguf_file.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "npy_test_util.h"

namespace fixq::gguf {
namespace {

using npy_test::expect_error;
using npy_test::expect_io_error;
using npy_test::read_bytes;
using npy_test::write_bytes;

// Little-endian bytes of the GGUF layout, written field by field as the spec lists them.
struct Builder {
  std::string b;
  template <class T>
  Builder& put(T v) {
    b.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Builder& str(const std::string& s) {
    put<uint64_t>(s.size());
    b += s;
    return *this;
  }
  Builder& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    b += "GGUF";
    return put<uint32_t>(version).put<uint64_t>(tensors).put<uint64_t>(kvs);
  }
  // n_dims, ne (innermost first), type id, offset.
  Builder& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).put<uint32_t>(static_cast<uint32_t>(ne.size()));
    for (uint64_t e : ne) put<uint64_t>(e);
    return put<uint32_t>(type).put<uint64_t>(offset);
  }
  Builder& pad(std::size_t alignment) {
    b.append((alignment - b.size() % alignment) % alignment, '\0');
    return *this;
  }
};

class GgufFile : public npy_test::ScratchDir {
 protected:
  std::string file(const std::string& bytes, const std::string& name = "t.gguf") {
    write_bytes(path(name), bytes);
    return path(name);
  }
};

std::string golden_vector(const std::string& name) { return std::string(FIXQ_VECTORS_DIR) + "/ggml/" + name; }

// ---- reading a file built from the spec ------------------------------------------------------

TEST_F(GgufFile, ReadsAHandBuiltFile) {
  Builder g;
  g.header(2, 4)
      .str("general.architecture").put<uint32_t>(8).str("llama")
      .str("llama.context_length").put<uint32_t>(4).put<uint32_t>(4096)
      .str("tokenizer.ggml.scores").put<uint32_t>(9).put<uint32_t>(6).put<uint64_t>(2).put(0.5f).put(-1.25f)
      .str("flag").put<uint32_t>(7).put<uint8_t>(1);
  g.tensor("a", {3, 2}, 0, 0).tensor("b", {32}, 8, 32).pad(32);
  const float a[6] = {1, 2, 3, 4, 5, 6};
  g.b.append(reinterpret_cast<const char*>(a), sizeof a);
  g.pad(32);
  std::string q8(34, '\0');  // one q8_0 block: d = 1.0 (fp16 0x3C00), q = 0..31
  q8[0] = 0x00;
  q8[1] = 0x3C;
  for (int i = 0; i < 32; ++i) q8[2 + i] = static_cast<char>(i - 16);
  g.b += q8;

  const File f(file(g.b));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  ASSERT_EQ(f.metadata().size(), 4u);
  EXPECT_EQ(f.metadata()[0].first, "general.architecture");
  EXPECT_EQ(f.find_value("general.architecture")->as_string(), "llama");
  EXPECT_EQ(f.find_value("llama.context_length")->type(), ValueType::U32);
  EXPECT_EQ(f.find_value("llama.context_length")->as_uint(), 4096u);
  const Value::Array& scores = f.find_value("tokenizer.ggml.scores")->as_array();
  EXPECT_EQ(scores.element, ValueType::F32);
  ASSERT_EQ(scores.items.size(), 2u);
  EXPECT_EQ(scores.items[1].as_float(), -1.25);
  EXPECT_TRUE(f.find_value("flag")->as_bool());
  EXPECT_EQ(f.find_value("tokenizer.ggml.scores")->str(), "[2 x float32] [0.5, -1.25]");

  ASSERT_EQ(f.tensors().size(), 2u);
  const TensorInfo& ta = f.info("a");
  EXPECT_EQ(ta.shape, (Shape{2, 3}));  // ne = [3, 2] in C order
  EXPECT_EQ(ta.ne(), (Shape{3, 2}));
  EXPECT_EQ(ta.type->name, "f32");
  EXPECT_EQ(f.read_f32(ta), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const TensorInfo& tb = f.info("b");
  EXPECT_EQ(tb.type->name, "q8_0");
  EXPECT_EQ(tb.bytes, 34u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  const std::vector<float> b = f.read_f32(tb);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(b[static_cast<std::size_t>(i)], static_cast<float>(i - 16));
  expect_error([&] { f.info("c"); }, "no tensor named 'c'");
}

// ggml's own dequantized bits (tests/vectors/ggml, ggml d99724f2) for every block format
// fixq decodes: each .bin laid into a GGUF tensor [64, 256] must read back as .dequant.f32.
TEST_F(GgufFile, DequantizesEveryBlockFormatWithGgmlsBits) {
  int checked = 0;
  for (const TypeTraits& t : all_types()) {
    const std::string bin = golden_vector(std::string(t.name) + ".bin");
    const std::string want = golden_vector(std::string(t.name) + ".dequant.f32");
    if (!std::filesystem::exists(bin) || !std::filesystem::exists(want)) continue;
    const std::string packed = read_bytes(bin);
    Builder g;
    g.header(1, 0).tensor("w", {256, 64}, static_cast<uint32_t>(t.ggml_type), 0).pad(32);
    g.b += packed;
    const File f(file(g.b, std::string(t.name) + ".gguf"));
    const TensorInfo& w = f.info("w");
    ASSERT_EQ(w.bytes, packed.size()) << t.name;
    const std::vector<float> got = f.read_f32(w);
    const std::string expect = read_bytes(want);
    ASSERT_EQ(got.size() * 4, expect.size()) << t.name;
    EXPECT_EQ(std::memcmp(got.data(), expect.data(), expect.size()), 0) << t.name << ": not ggml's bits";
    ++checked;
  }
  EXPECT_GE(checked, 13);  // q4_0 .. q8_K (not q8_1, which ggml cannot dequantize), iq4_nl, mxfp4, ...
}

// ---- round trips ------------------------------------------------------------------------------

Metadata every_value_type() {
  Metadata m;
  m.emplace_back("u8", Value::u8(255));
  m.emplace_back("i8", Value::i8(-128));
  m.emplace_back("u16", Value::u16(65535));
  m.emplace_back("i16", Value::i16(-32768));
  m.emplace_back("u32", Value::u32(4000000000u));
  m.emplace_back("i32", Value::i32(-2000000000));
  m.emplace_back("f32", Value::f32(0.1f));
  m.emplace_back("bool", Value::boolean(false));
  m.emplace_back("string", Value::string("grüße \"quoted\"\n"));
  m.emplace_back("empty", Value::string(""));
  m.emplace_back("u64", Value::u64(UINT64_MAX));
  m.emplace_back("i64", Value::i64(INT64_MIN));
  m.emplace_back("f64", Value::f64(-1e300));
  m.emplace_back("strings", Value::array(ValueType::String, {Value::string("a"), Value::string("bc")}));
  m.emplace_back("nested", Value::array(ValueType::Array, {Value::array(ValueType::I32, {Value::i32(1), Value::i32(2)}),
                                                           Value::array(ValueType::Bool, {})}));
  m.emplace_back("no_items", Value::array(ValueType::F64, {}));
  return m;
}

void expect_same(const Value& a, const Value& b, const std::string& key) {
  ASSERT_EQ(a.type(), b.type()) << key;
  EXPECT_EQ(a.str(1000), b.str(1000)) << key;
  if (a.type() == ValueType::String) {
    EXPECT_EQ(a.as_string(), b.as_string()) << key;
  }
  if (a.type() == ValueType::F32 || a.type() == ValueType::F64) {
    EXPECT_EQ(std::bit_cast<uint64_t>(a.as_float()), std::bit_cast<uint64_t>(b.as_float())) << key;
  }
}

TEST_F(GgufFile, RoundTripsEveryValueTypeAndEveryTensorType) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<TensorToWrite> tensors;
  std::vector<std::vector<std::byte>> payloads;
  const std::vector<TensorType> types = all_tensor_types();
  for (const TensorType& t : types) {
    const Shape shape{2, 3 * t.block_elems};
    std::vector<float> x(static_cast<std::size_t>(numel(shape)));
    for (float& v : x) v = normal(rng);
    std::vector<std::byte> bytes;
    if (t.is_float && t.name != "f64") {
      bytes = encode(t, x, shape);
    } else {  // raw bytes of the right size: integers, f64 and formats fixq cannot encode
      bytes.resize(tensor_bytes(t, shape));
      for (std::byte& b : bytes) b = static_cast<std::byte>(rng() & 0x3f);  // small, finite patterns
    }
    payloads.push_back(bytes);
  }
  for (std::size_t i = 0; i < types.size(); ++i)
    tensors.push_back({"t." + std::string(types[i].name), &*find_tensor_type(types[i].id),
                       Shape{2, 3 * types[i].block_elems}, [&payloads, i] { return payloads[i]; }});
  tensors.push_back({"scalar", &tensor_type("f32"), Shape{}, [] {
                       const float v = 7;
                       return std::vector<std::byte>(reinterpret_cast<const std::byte*>(&v),
                                                     reinterpret_cast<const std::byte*>(&v) + 4);
                     }});
  const Metadata meta = every_value_type();
  save(path("all.gguf"), meta, tensors, 64);

  const File f(path("all.gguf"));
  EXPECT_EQ(f.alignment(), 64u);
  ASSERT_EQ(f.metadata().size(), meta.size() + 1);  // + general.alignment
  for (std::size_t i = 0; i < meta.size(); ++i) {
    EXPECT_EQ(f.metadata()[i].first, meta[i].first);
    expect_same(f.metadata()[i].second, meta[i].second, meta[i].first);
  }
  EXPECT_EQ(f.find_value("general.alignment")->as_uint(), 64u);
  ASSERT_EQ(f.tensors().size(), types.size() + 1);
  uint64_t expect_offset = 0;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const TensorInfo& t = f.tensors()[i];
    EXPECT_EQ(t.name, "t." + std::string(types[i].name));
    EXPECT_EQ(t.type->id, types[i].id);
    EXPECT_EQ(t.shape, (Shape{2, 3 * types[i].block_elems}));
    EXPECT_EQ(t.offset, expect_offset) << t.name;  // tensors back to back, each aligned
    expect_offset += (t.bytes + 63) / 64 * 64;
    EXPECT_EQ(f.read_raw(t), payloads[i]) << t.name;
    if (t.type->block) {
      EXPECT_EQ(f.read_f32(t), dequantize(*t.type->block, payloads[i])) << t.name;
    }
    if (!t.type->decodable()) expect_error([&] { f.read_f32(t); }, "tensor '" + t.name + "'", "cannot decode");
  }
  EXPECT_EQ(f.tensors().back().shape, (Shape{1}));  // a scalar is stored as ne = [1]
  EXPECT_EQ(f.read_f32(f.tensors().back()), std::vector<float>{7});
}

TEST_F(GgufFile, PlainTypesConvertExactlyOrRefuse) {
  const std::vector<float> x = {1.0f, -2.5f, 65504.0f, 1e-8f};
  const Shape shape{4};
  for (const char* name : {"f32", "f16", "bf16"}) {
    const TensorType& t = tensor_type(name);
    const std::vector<std::byte> bytes = encode(t, x, shape);
    save(path("p.gguf"), {}, {{"x", &t, shape, [&] { return bytes; }}});
    const File f(path("p.gguf"));
    const std::vector<float> back = f.read_f32(f.info("x"));
    EXPECT_EQ(back[0], 1.0f) << name;
    EXPECT_EQ(back[1], -2.5f) << name;
    if (std::string(name) != "bf16") {
      EXPECT_EQ(back[2], 65504.0f) << name;
    }
  }
  expect_error([&] { encode(tensor_type("f16"), std::vector<float>{70000.0f}, Shape{1}); }, "beyond the f16 range");
  expect_error([&] { encode(tensor_type("q4_0"), std::vector<float>(32, NAN), Shape{32}); }, "NaN");
  expect_error([&] { encode(tensor_type("q4_0"), std::vector<float>(32, 1e6f), Shape{32}); },
               "scale beyond the fp16 range");
  expect_error([&] { encode(tensor_type("q4_0"), std::vector<float>(16, 0.0f), Shape{16}); }, "blocks of 32");
  expect_error([&] { encode(tensor_type("i32"), std::vector<float>(1, 0.0f), Shape{1}); }, "not an integer type");

  const int64_t big[2] = {(int64_t{1} << 40), (int64_t{1} << 53) + 1};
  Builder g;
  g.header(1, 0).tensor("i", {2}, 27, 0).pad(32);
  g.b.append(reinterpret_cast<const char*>(big), sizeof big);
  const File f(file(g.b));
  expect_error([&] { f.read_f32(f.info("i")); }, "element 1 = 9007199254740993 is not exact in float32");
}

// ---- bad files --------------------------------------------------------------------------------

std::string small_file() {
  Builder g;
  g.header(1, 2).str("general.alignment").put<uint32_t>(4).put<uint32_t>(16);
  g.str("names").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(1).str("x");
  g.tensor("w", {32, 1}, 2, 0).pad(16);
  g.b.append(18, '\x11');
  return g.b;
}

TEST_F(GgufFile, EveryTruncationIsRefusedByName) {
  const std::string good = small_file();
  EXPECT_EQ(File(file(good)).info("w").bytes, 18u);
  for (std::size_t n = 0; n < good.size(); ++n) {
    try {
      File f(file(good.substr(0, n)));
      ADD_FAILURE() << "a file cut to " << n << " of " << good.size() << " bytes opened";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("not a GGUF file") != std::string::npos)
          << n << ": " << msg;
      EXPECT_NE(msg.find("t.gguf"), std::string::npos) << msg;
    }
  }
}

TEST_F(GgufFile, CorruptHeadersAreRefusedByName) {
  const auto open = [&](const std::string& bytes) { File f(file(bytes)); };
  expect_error([&] { open("GGML" + small_file().substr(4)); }, "not a GGUF file");
  expect_error([&] { open(Builder().header(0, 0, 1).b); }, "GGUF version 1");
  expect_error([&] { open(Builder().header(0, 0, 7).b); }, "unknown GGUF version 7");
  expect_error([&] { open(Builder().header(0, 0, 0x03000000).b); }, "big-endian");
  expect_error([&] { open(Builder().header(0, 1).str("k").put<uint32_t>(13).put<uint8_t>(0).b); },
               "metadata \"k\" has value type 13");
  expect_error([&] { open(Builder().header(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2).b); },
               "bool stored as 2");
  expect_error([&] {
    open(Builder().header(0, 2).str("k").put<uint32_t>(0).put<uint8_t>(1).str("k").put<uint32_t>(0).put<uint8_t>(2).b);
  }, "duplicate metadata \"k\"");
  expect_error([&] { open(Builder().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(1u << 30).b); },
               "truncated or corrupt", "claims 1073741824 items");
  expect_error([&] { open(Builder().header(0, 1).str("k").put<uint32_t>(8).put<uint64_t>(UINT64_MAX).b); },
               "truncated or corrupt: metadata \"k\"", "claims 18446744073709551615 bytes");
  expect_error([&] { open(Builder().header(UINT64_MAX / 2, 0).b); }, "tensor infos cannot fit");
  expect_error([&] { open(Builder().header(0, UINT64_MAX).b); }, "metadata entries cannot fit");
  expect_error([&] { open(Builder().header(0, 1).str("general.alignment").put<uint32_t>(4).put<uint32_t>(24).b); },
               "\"general.alignment\" is 24, not a power of two");
  expect_error([&] { open(Builder().header(0, 1).str("general.alignment").put<uint32_t>(10).put<uint64_t>(32).b); },
               "\"general.alignment\" is a uint64, not a uint32");
  // Tensor infos.
  const auto one_tensor = [](const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset,
                             std::size_t data) {
    Builder g;
    g.header(1, 0).tensor(name, ne, type, offset).pad(32);
    g.b.append(data, '\0');
    return g.b;
  };
  expect_error([&] { open(one_tensor("w", {32, 1, 1, 1, 1}, 0, 0, 4096)); }, "'w' has 5 dimensions");
  expect_error([&] { open(one_tensor("w", {32}, 4, 0, 64)); }, "'w' has ggml type id 4", "does not define");
  expect_error([&] { open(one_tensor("w", {32}, 99, 0, 64)); }, "ggml type id 99");
  expect_error([&] { open(one_tensor("w", {16}, 2, 0, 64)); }, "'w'", "blocks of 32", "rows of 16");
  expect_error([&] { open(one_tensor("w", {32}, 0, 8, 256)); }, "data offset 8, not a multiple of the alignment 32");
  expect_error([&] { open(one_tensor("w", {32}, 0, 0, 100)); }, "truncated", "'w'", "128 bytes");
  expect_error([&] { open(one_tensor("w", {1ull << 62, 4}, 0, 0, 0)); }, "'w'", "more elements than fit in int64");
  expect_error([&] { open(one_tensor("w", {UINT64_MAX}, 0, 0, 0)); }, "extent 18446744073709551615 beyond int64");
  // Elements that fit int64 in blocks that do not: q8_0 (id 8) takes 34 bytes per 32 values.
  expect_error([&] { open(one_tensor("w", {INT64_MAX / 32 * 32}, 8, 0, 0)); }, "tensor 'w': the byte count of a q8_0 "
               "tensor of shape [9223372036854775776] overflows int64 (288230376151711743 * 34)");
  Builder two;
  two.header(2, 0).tensor("a", {32}, 0, 0).tensor("b", {8}, 0, 128).pad(32);
  two.b.append(256, '\0');
  EXPECT_NO_THROW(open(two.b));
  Builder overlap;
  overlap.header(2, 0).tensor("a", {32}, 0, 0).tensor("b", {8}, 0, 64).pad(32);
  overlap.b.append(256, '\0');
  expect_error([&] { open(overlap.b); }, "tensors 'a'", "and 'b'", "overlap");
  Builder dup;
  dup.header(2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).pad(32);
  dup.b.append(64, '\0');
  expect_error([&] { open(dup.b); }, "two tensors are named 'a'");
  expect_io_error([&] { File f(path("missing.gguf")); }, ENOENT, "missing.gguf", "cannot open");
  // Names are bytes: messages show them escaped, never raw control characters or non-UTF-8.
  Builder odd;
  odd.header(2, 0).tensor("\xff\x1b[2Jé", {8}, 0, 0).tensor("\xff\x1b[2Jé", {8}, 0, 32).pad(32);
  odd.b.append(64, '\0');
  expect_error([&] { open(odd.b); }, "two tensors are named '\\xff\\x1b[2Jé'");
  EXPECT_EQ(printable("a\tb\xc2\x9b\xe2\x82\xac"), "a\\x09b\\xc2\\x9b\xe2\x82\xac");
}

TEST_F(GgufFile, WriterRefusesBadTensorsAndKeepsTheOldFile) {
  write_bytes(path("keep.gguf"), "old");
  const TensorType& f32 = tensor_type("f32");
  const auto floats = [](std::size_t n) { return [n] { return std::vector<std::byte>(4 * n); }; };
  expect_error([&] { save(path("keep.gguf"), {}, {{std::string(64, 'n'), &f32, {1}, floats(1)}}); },
               "has 64 bytes; ggml reads names of at most 63");
  expect_error([&] { save(path("keep.gguf"), {}, {{"a", &f32, {1}, floats(1)}, {"a", &f32, {1}, floats(1)}}); },
               "two tensors are named 'a'");
  expect_error([&] { save(path("keep.gguf"), {}, {{"a", &f32, {1, 1, 1, 1, 1}, floats(1)}}); }, "rank 5");
  expect_error([&] { save(path("keep.gguf"), {}, {{"a", &tensor_type("q4_K"), {2, 32}, floats(0)}}); }, "blocks of 256");
  expect_error([&] { save(path("keep.gguf"), {}, {{"a", &f32, {3}, floats(2)}}); }, "needs 12 bytes, but 8");
  expect_error([&] { save(path("keep.gguf"), {{"k", Value::u8(1)}, {"k", Value::u8(2)}}, {}); }, "duplicate metadata key");
  expect_error([&] { save(path("keep.gguf"), {{"general.alignment", Value::u64(32)}}, {}); }, "general.alignment");
  expect_error([&] { save(path("keep.gguf"), {}, {}, 48); }, "alignment 48 is not a power of two");
  // Each tensor's size fits int64 (here 2^63 - 4 bytes), the data offsets of two do not
  // fit uint64: refused before the header is written, not wrapped into it.
  const Shape huge{INT64_MAX / 4};
  expect_error([&] { save(path("keep.gguf"), {}, {{"a", &f32, huge, floats(0)}, {"b", &f32, huge, floats(0)}}); },
               "gguf: save ", "keep.gguf: the data offset after tensor 'b' overflows uint64 (18446744073709551612 + 4)");
  expect_error([&] { tensor_type("q9_9"); }, "unknown GGUF tensor type 'q9_9'", "q4_K");
  EXPECT_EQ(read_bytes(path("keep.gguf")), "old");
  EXPECT_EQ(listing(), "keep.gguf ");
}

// ggml's formats fixq has no kernels for still open and list (their sizes are ggml's).
TEST_F(GgufFile, FormatsFixqCannotDecodeOpenAndRefuseDecoding) {
  Builder g;
  g.header(1, 0).tensor("w", {256, 2}, 16, 0).pad(32);  // iq2_xxs: 66 bytes per 256 values
  g.b.append(132, '\0');
  const File f(file(g.b));
  EXPECT_EQ(f.info("w").type->name, "iq2_xxs");
  EXPECT_EQ(f.info("w").bytes, 132u);
  expect_error([&] { f.read_f32(f.info("w")); }, "'w' is iq2_xxs, a ggml format fixq cannot decode");
}

}  // namespace
}  // namespace fixq::gguf
