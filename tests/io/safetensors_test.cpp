// safetensors: golden files written by an independent Python writer
// (tests/io/data/make_safetensors_golden.py), round trips of every dtype, the layout fixq
// writes, and every kind of bad input, each refused with a message naming the problem.
#include "fixq/safetensors.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "npy_test_util.h"

namespace fixq {
namespace {

using npy_test::expect_error;
using npy_test::expect_io_error;
using npy_test::golden;
using npy_test::read_bytes;
using npy_test::write_bytes;

// A file of the given header text (unpadded) and data bytes.
std::string st_bytes(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  return out + header + data;
}

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

// ---- golden files ------------------------------------------------------------------------

TEST(SafetensorsGolden, ReadsEveryDtypeWithItsShapeAndMetadata) {
  const SafetensorsFile f(golden("st_all_dtypes.safetensors"));
  EXPECT_EQ(f.metadata(), (std::map<std::string, std::string>{{"format", "pt"}, {"note", "grüße ✓"}}));
  ASSERT_EQ(f.tensors().size(), 17u);
  EXPECT_EQ(f.info("u8").shape, (Shape{2, 2}));
  EXPECT_EQ(f.info("i32").shape, (Shape{2, 1, 2}));
  EXPECT_EQ(f.info("scalar").shape, Shape{});
  EXPECT_EQ(f.info("empty").shape, (Shape{0, 3}));
  EXPECT_EQ(f.info("f8_e4m3").dtype, SafetensorsDtype::F8_E4M3);

  EXPECT_EQ(f.read_u8("u8"), (std::vector<uint8_t>{0, 1, 254, 255}));
  EXPECT_EQ(f.read_i8("i8"), (std::vector<int8_t>{-128, -1, 0, 127}));
  EXPECT_EQ(f.read_i16("i16"), (std::vector<int16_t>{-32768, -1, 0, 32767}));
  EXPECT_EQ(f.read_u16("u16"), (std::vector<uint16_t>{0, 1, 65535}));
  EXPECT_EQ(f.read_i32("i32"), (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 0,
                                                     std::numeric_limits<int32_t>::max()}));
  EXPECT_EQ(f.read_i64("i64"), (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0,
                                                     std::numeric_limits<int64_t>::max()}));
  EXPECT_TRUE(f.read_i32("empty").empty());
  EXPECT_EQ(f.read_raw("bool"), (std::vector<std::byte>{std::byte{1}, std::byte{0}, std::byte{1}}));
  EXPECT_EQ(f.read_raw("f8_e5m2"), (std::vector<std::byte>{std::byte{0x3c}, std::byte{0xbc}}));
  EXPECT_EQ(f.read_raw("u64"), std::vector<std::byte>(8, std::byte{0xff}));
}

TEST(SafetensorsGolden, ConvertsEveryFloatDtypeExactly) {
  const SafetensorsFile f(golden("st_all_dtypes.safetensors"));
  EXPECT_EQ(f.read_f32("f32"), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(f.read_f32("scalar"), std::vector<float>{3.25f});
  EXPECT_EQ(f.read_f32("f64"), (std::vector<float>{static_cast<float>(0.1), -2.5f, 0.0f}));
  const std::vector<float> h = f.read_f32("f16");
  ASSERT_EQ(h.size(), 9u);
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.5f);
  EXPECT_EQ(h[2], 65504.0f);
  EXPECT_EQ(h[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(h[4], std::ldexp(1023.0f, -24));
  EXPECT_EQ(h[5], std::ldexp(1.0f, -14));
  EXPECT_EQ(h[6], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(std::bit_cast<uint32_t>(h[7]), 0x80000000u);  // -0
  EXPECT_TRUE(std::isnan(h[8]));
  EXPECT_EQ(f.read_f32("bf16"), (std::vector<float>{1.0f, -3.140625f, std::bit_cast<float>(0x7f7f0000u),
                                                    std::ldexp(1.0f, -133)}));
}

TEST(SafetensorsGolden, RewritesTheGoldenFileByteForByte) {
  const std::string path = golden("st_all_dtypes.safetensors");
  const SafetensorsFile f(path);
  std::vector<std::vector<std::byte>> raws;
  for (const auto& t : f.tensors()) raws.push_back(f.read_raw(t.name));
  std::vector<SafetensorsTensorView> views;
  for (std::size_t i = 0; i < raws.size(); ++i) {
    const auto& t = f.tensors()[i];
    views.push_back({t.name, t.dtype, t.shape, raws[i]});
  }
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("fixq_st_rewrite_" + std::to_string(::getpid()) + ".safetensors")).string();
  save_safetensors(out, views, f.metadata());
  const std::string written = read_bytes(out);
  std::filesystem::remove(out);
  EXPECT_EQ(written, read_bytes(path));
}

TEST(SafetensorsGolden, ReadsAForeignLayout) {
  const SafetensorsFile f(golden("st_foreign.safetensors"));
  EXPECT_EQ(f.metadata(), (std::map<std::string, std::string>{{"source", "foreign"}}));
  std::vector<std::string> order;
  for (const auto& t : f.tensors()) order.push_back(t.name);
  // Data order; the zero-byte tensor shares its offset with the scalar after it.
  EXPECT_EQ(order, (std::vector<std::string>{"i8", "f32", "bool", "f64", "empty", "scalar"}));
  EXPECT_EQ(f.read_f32("f32"), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(f.read_i8("i8"), (std::vector<int8_t>{-128, -1, 0, 127}));
  EXPECT_EQ(f.read_f32("scalar"), std::vector<float>{3.25f});
  EXPECT_EQ(f.info("f32").begin, 4u);  // unaligned, which the format allows
}

// ---- round trips and layout --------------------------------------------------------------

class SafetensorsRoundTrip : public npy_test::ScratchDir {};

TEST_F(SafetensorsRoundTrip, EveryDtypeKeepsItsBytesShapeAndName) {
  std::mt19937 rng(7);
  const Shape shapes[] = {{}, {0}, {5}, {2, 3}, {1, 0, 4}, {3, 1, 2, 1}};
  std::vector<std::vector<std::byte>> data;
  std::vector<SafetensorsTensorView> views;
  for (int d = 0; d <= static_cast<int>(SafetensorsDtype::F64); ++d) {
    const auto dtype = static_cast<SafetensorsDtype>(d);
    for (std::size_t s = 0; s < std::size(shapes); ++s) {
      std::vector<std::byte> bytes(static_cast<std::size_t>(numel(shapes[s])) * safetensors_itemsize(dtype));
      for (auto& b : bytes) b = static_cast<std::byte>(rng());
      data.push_back(std::move(bytes));
      views.push_back({to_string(dtype) + "/" + std::to_string(s), dtype, shapes[s], {}});
    }
  }
  for (std::size_t i = 0; i < views.size(); ++i) views[i].data = data[i];
  const std::map<std::string, std::string> metadata{{"a", "1"}, {"", "empty key"}, {"ü", "\n\"\\"}};
  save_safetensors(path("all.safetensors"), views, metadata);

  const SafetensorsFile f(path("all.safetensors"));
  EXPECT_EQ(f.metadata(), metadata);
  ASSERT_EQ(f.tensors().size(), views.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    const SafetensorsTensorInfo& t = f.info(views[i].name);
    EXPECT_EQ(t.dtype, views[i].dtype) << t.name;
    EXPECT_EQ(t.shape, views[i].shape) << t.name;
    EXPECT_EQ(f.read_raw(t.name), data[i]) << t.name;
  }
  EXPECT_EQ(listing(), "all.safetensors ");  // no temporary left behind
}

TEST_F(SafetensorsRoundTrip, TypedValuesSurvive) {
  const std::vector<float> f32{1.5f, -0.0f, std::numeric_limits<float>::denorm_min(), 3e38f};
  const std::vector<int8_t> i8{-128, 0, 127};
  const std::vector<int64_t> i64{std::numeric_limits<int64_t>::min(), 42};
  save_safetensors(path("t.safetensors"), {{"f", SafetensorsDtype::F32, {2, 2}, bytes_of(f32)},
                                           {"i", SafetensorsDtype::I8, {3}, bytes_of(i8)},
                                           {"l", SafetensorsDtype::I64, {2, 1}, bytes_of(i64)}});
  const SafetensorsFile f(path("t.safetensors"));
  EXPECT_TRUE(f.metadata().empty());
  EXPECT_EQ(f.read_f32("f"), f32);
  EXPECT_EQ(f.read_i8("i"), i8);
  EXPECT_EQ(f.read_i64("l"), i64);
  EXPECT_EQ(f.find("missing"), nullptr);
}

TEST_F(SafetensorsRoundTrip, DataIsAlignedAndTheHeaderSortedAndPadded) {
  const std::vector<int8_t> odd(3, 1);
  const std::vector<double> wide(2, 2.0);
  const std::vector<int16_t> half(1, 3);
  const std::vector<float> single(5, 4.0f);
  save_safetensors(path("a.safetensors"), {{"z_i8", SafetensorsDtype::I8, {3}, bytes_of(odd)},
                                           {"b_f64", SafetensorsDtype::F64, {2}, bytes_of(wide)},
                                           {"a_i16", SafetensorsDtype::I16, {1}, bytes_of(half)},
                                           {"c_f32", SafetensorsDtype::F32, {5}, bytes_of(single)}},
                   {{"k", "v"}});
  const std::string bytes = read_bytes(path("a.safetensors"));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ((8 + n) % 8, 0u);
  std::string json =
      "{\"__metadata__\":{\"k\":\"v\"},"
      "\"a_i16\":{\"data_offsets\":[36,38],\"dtype\":\"I16\",\"shape\":[1]},"
      "\"b_f64\":{\"data_offsets\":[0,16],\"dtype\":\"F64\",\"shape\":[2]},"
      "\"c_f32\":{\"data_offsets\":[16,36],\"dtype\":\"F32\",\"shape\":[5]},"
      "\"z_i8\":{\"data_offsets\":[38,41],\"dtype\":\"I8\",\"shape\":[3]}}";
  json.append((8 - json.size() % 8) % 8, ' ');
  EXPECT_EQ(bytes.substr(8, n), json);
  const SafetensorsFile f(path("a.safetensors"));
  for (const auto& t : f.tensors()) EXPECT_EQ((8 + n + t.begin) % safetensors_itemsize(t.dtype), 0u) << t.name;
}

TEST_F(SafetensorsRoundTrip, AnEmptyFileHasNoTensorsAndNoMetadata) {
  save_safetensors(path("e.safetensors"), {});
  EXPECT_EQ(read_bytes(path("e.safetensors")), st_bytes("{}      "));
  const SafetensorsFile f(path("e.safetensors"));
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_TRUE(f.metadata().empty());
}

TEST_F(SafetensorsRoundTrip, AMovedFileStillReads) {
  const std::vector<float> v{1.0f, 2.0f};
  save_safetensors(path("m.safetensors"), {{"v", SafetensorsDtype::F32, {2}, bytes_of(v)}});
  SafetensorsFile a(path("m.safetensors"));
  SafetensorsFile b(std::move(a));
  EXPECT_EQ(b.read_f32("v"), v);
  SafetensorsFile c(path("m.safetensors"));
  c = std::move(b);
  EXPECT_EQ(c.read_f32("v"), v);
}

TEST(SafetensorsDtype, NamesAndItemSizes) {
  EXPECT_EQ(to_string(SafetensorsDtype::BF16), "BF16");
  EXPECT_EQ(parse_safetensors_dtype("F8_E4M3"), SafetensorsDtype::F8_E4M3);
  EXPECT_EQ(safetensors_itemsize(SafetensorsDtype::U64), 8u);
  EXPECT_EQ(safetensors_itemsize(SafetensorsDtype::F16), 2u);
  for (int d = 0; d <= static_cast<int>(SafetensorsDtype::F64); ++d)
    EXPECT_EQ(static_cast<int>(parse_safetensors_dtype(to_string(static_cast<SafetensorsDtype>(d)))), d);
  expect_error([] { parse_safetensors_dtype("f32"); }, "unknown safetensors dtype 'f32'", "F32");
}

// ---- bad input ---------------------------------------------------------------------------

class SafetensorsBadInput : public npy_test::ScratchDir {
 protected:
  // Writes the bytes to a file and expects opening it to fail with every key.
  template <class... Keys>
  void expect_refused(const std::string& bytes, const Keys&... keys) {
    write_bytes(path("bad.safetensors"), bytes);
    expect_error([&] { SafetensorsFile f(path("bad.safetensors")); }, path("bad.safetensors"), keys...);
  }
};

// A valid entry for tensor a: F32 [2] at [0, 8].
const std::string kEntryA = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

TEST_F(SafetensorsBadInput, TheValidBaseOpens) {
  write_bytes(path("ok.safetensors"), st_bytes("{" + kEntryA + "}", std::string(8, '\0')));
  EXPECT_EQ(SafetensorsFile(path("ok.safetensors")).read_f32("a"), (std::vector<float>{0.0f, 0.0f}));
}

TEST_F(SafetensorsBadInput, MissingOrNotAFile) {
  expect_io_error([&] { SafetensorsFile f(path("none.safetensors")); }, ENOENT, "cannot open", "none.safetensors");
  expect_error([&] { SafetensorsFile f(dir_.string()); }, "not a regular file");
}

TEST_F(SafetensorsBadInput, TruncatedOrAbsurdHeaderLength) {
  expect_refused("", "truncated", "8-byte header length");
  expect_refused(std::string("\x02\0\0\0", 4), "truncated");
  std::string absurd = st_bytes("{}");
  absurd[5] = 1;  // 2^40 + 2 bytes of header
  expect_refused(absurd, "header length 1099511627778 is absurd");
  expect_refused(st_bytes("{" + kEntryA + "}").substr(0, 20), "truncated", "header length is");
}

TEST_F(SafetensorsBadInput, MalformedJson) {
  expect_refused(st_bytes(""), "must start with '{'");
  expect_refused(st_bytes(" {}"), "must start with '{'");
  expect_refused(st_bytes("[]"), "must start with '{'");
  expect_refused(st_bytes("{\"a\": "), "not valid JSON");
  expect_refused(st_bytes("{} x"), "not valid JSON");
  expect_refused(st_bytes("{\"\xff\": 1}"), "not valid JSON");  // not UTF-8
  expect_refused(st_bytes("{" + kEntryA + "," + kEntryA + "}", std::string(8, '\0')),
                 "duplicate key \"a\"");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                          std::string(8, '\0')),
                 "duplicate key \"dtype\"");
}

TEST_F(SafetensorsBadInput, BadMetadata) {
  expect_refused(st_bytes(R"({"__metadata__":[]})"), "\"__metadata__\" must be an object");
  expect_refused(st_bytes(R"({"__metadata__":{"n":1}})"), "value of \"n\" must be a string");
}

TEST_F(SafetensorsBadInput, BadEntries) {
  const std::string data(8, '\0');
  expect_refused(st_bytes(R"({"a":3})", data), "tensor 'a'", "must be an object");
  expect_refused(st_bytes(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", data), "tensor 'a'",
                 "missing field \"dtype\"");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":0}})", data),
                 "tensor 'a'", "unexpected field \"x\"");
  expect_refused(st_bytes(R"({"a":{"dtype":"F128","shape":[2],"data_offsets":[0,8]}})", data),
                 "tensor 'a'", "unknown safetensors dtype 'F128'");
  expect_refused(st_bytes(R"({"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", data),
                 "tensor 'a'", "dtype must be a string");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
                 "tensor 'a'", "non-negative integers");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", data),
                 "tensor 'a'", "non-negative integers");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", data),
                 "tensor 'a'", "shape must be a list");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data),
                 "tensor 'a'", "more elements than fit in int64");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data),
                 "tensor 'a'", "data_offsets must be [begin, end]");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data),
                 "tensor 'a'", "end before they begin");
}

TEST_F(SafetensorsBadInput, OffsetsOutOfRange) {
  expect_refused(st_bytes("{" + kEntryA + "}", std::string(5, '\0')), "tensor 'a'",
                 "reach beyond the 5 bytes of the data section", "truncated");
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}})"),
                 "tensor 'a'", "reach beyond");
}

TEST_F(SafetensorsBadInput, ShapeDoesNotMatchTheByteRange) {
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
                 "tensor 'a'", "shape [3] of F32 needs 3 x 4 bytes", "span 8");
  expect_refused(st_bytes(R"({"a":{"dtype":"F64","shape":[1152921504606846976],"data_offsets":[0,8]}})",
                          std::string(8, '\0')),
                 "tensor 'a'", "needs 1152921504606846976 x 8 bytes");
}

TEST_F(SafetensorsBadInput, OverlapsHolesAndTrailingBytes) {
  const std::string b_at = R"("b":{"dtype":"U8","shape":[4],"data_offsets":)";
  expect_refused(st_bytes("{" + kEntryA + "," + b_at + "[6,10]}}", std::string(10, '\0')), "tensor 'b'",
                 "overlap tensor 'a'");
  expect_refused(st_bytes("{" + kEntryA + "," + b_at + "[10,14]}}", std::string(14, '\0')), "tensor 'b'",
                 "hole of 2 unused bytes");
  expect_refused(st_bytes(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", std::string(4, '\0')),
                 "tensor 'a'", "hole of 2");
  expect_refused(st_bytes("{" + kEntryA + "}", std::string(11, '\0')), "3 trailing bytes");
  expect_refused(st_bytes("{}", "x"), "1 trailing bytes");
  // A zero-byte tensor inside another one overlaps it too.
  expect_refused(st_bytes("{" + kEntryA + R"(,"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                          std::string(8, '\0')),
                 "tensor 'e'", "overlap tensor 'a'");
}

TEST_F(SafetensorsBadInput, WrongTypedReadAndMissingTensor) {
  const std::vector<int8_t> i8{1, 2};
  const std::vector<double> huge{1.0, 1e300};
  const std::vector<uint8_t> e4m3{0x38};
  save_safetensors(path("t.safetensors"), {{"i", SafetensorsDtype::I8, {2}, bytes_of(i8)},
                                           {"d", SafetensorsDtype::F64, {2}, bytes_of(huge)},
                                           {"q", SafetensorsDtype::F8_E4M3, {1}, bytes_of(e4m3)}});
  const SafetensorsFile f(path("t.safetensors"));
  expect_error([&] { f.read_f32("i"); }, "tensor 'i' is I8, not a float dtype");
  expect_error([&] { f.read_f32("q"); }, "tensor 'q' is F8_E4M3, not a float dtype");
  expect_error([&] { f.read_u8("i"); }, "tensor 'i' is I8 but U8 was asked for");
  expect_error([&] { f.read_f32("d"); }, "tensor 'd'", "element 1", "beyond the float32 range");
  expect_error([&] { f.read_raw("nope"); }, "t.safetensors", "no tensor named 'nope'");
}

TEST_F(SafetensorsBadInput, AFileThatShrinksAfterOpeningIsTruncated) {
  const std::vector<float> v(16, 1.0f);
  save_safetensors(path("s.safetensors"), {{"v", SafetensorsDtype::F32, {16}, bytes_of(v)}});
  const SafetensorsFile f(path("s.safetensors"));
  std::filesystem::resize_file(path("s.safetensors"), 40);
  expect_error([&] { f.read_f32("v"); }, "truncated");
}

TEST_F(SafetensorsBadInput, SaveRefusesBadTensorsAndLeavesTheTargetAlone) {
  const std::vector<float> v{1.0f, 2.0f};
  write_bytes(path("x.safetensors"), "old");
  const auto refused = [&](const std::vector<SafetensorsTensorView>& tensors,
                           const std::map<std::string, std::string>& metadata, const char* key) {
    expect_error([&] { save_safetensors(path("x.safetensors"), tensors, metadata); }, "save_safetensors",
                 key);
    EXPECT_EQ(read_bytes(path("x.safetensors")), "old");
  };
  refused({{"v", SafetensorsDtype::F32, {2}, bytes_of(v)}, {"v", SafetensorsDtype::F32, {2}, bytes_of(v)}},
          {}, "two tensors are named 'v'");
  refused({{"__metadata__", SafetensorsDtype::F32, {2}, bytes_of(v)}}, {}, "reserved");
  refused({{"v", SafetensorsDtype::F32, {3}, bytes_of(v)}}, {}, "needs 3 x 4 bytes, but 8 were given");
  refused({{"v", SafetensorsDtype::F16, {1}, bytes_of(v)}}, {}, "needs 1 x 2 bytes");
  refused({{"v", SafetensorsDtype::F32, {-2}, bytes_of(v)}}, {}, "negative extent");
  refused({{"\xc3", SafetensorsDtype::F32, {2}, bytes_of(v)}}, {}, "not valid UTF-8");
  refused({}, {{"k", "\xff"}}, "not valid UTF-8");
  expect_error([&] { save_safetensors(path("no/such/dir/x.safetensors"), {}); }, "save_safetensors",
               "cannot create a temporary file");
  EXPECT_EQ(listing(), "x.safetensors ");
}

}  // namespace
}  // namespace fixq
