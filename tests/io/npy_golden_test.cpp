// Files written by real numpy (tests/io/data/make_golden.py): read with the values the
// script put in, and rewritten by fixq byte for byte as numpy wrote them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fixq/npy.h"
#include "npy_test_util.h"

namespace fixq {
namespace {

using npy_test::expect_error;
using npy_test::golden;
using npy_test::read_bytes;

template <class T>
std::vector<T> as_values(const NpyArray& a) {
  std::vector<T> v(a.data.size() / sizeof(T));
  std::memcpy(v.data(), a.data.data(), a.data.size());
  return v;
}

TEST(NpyGolden, ReadsFloat32WithItsShape) {
  Shape shape;
  EXPECT_EQ(load_npy_f32(golden("f4_2x3.npy"), &shape),
            (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(shape, (Shape{2, 3}));
}

TEST(NpyGolden, RoundsFloat64ToFloat32) {
  Shape shape;
  EXPECT_EQ(load_npy_f32(golden("f8_3.npy"), &shape),
            (std::vector<float>{static_cast<float>(0.1), -2.5f, 0.0f}));  // 1e-300 -> 0
  EXPECT_EQ(shape, (Shape{3}));
}

TEST(NpyGolden, ReadsEveryIntegerTypeAtItsLimits) {
  Shape shape;
  EXPECT_EQ(load_npy_i8(golden("i1_4.npy"), &shape), (std::vector<int8_t>{-128, -1, 0, 127}));
  EXPECT_EQ(shape, (Shape{4}));
  EXPECT_EQ(load_npy_u8(golden("u1_2x2.npy"), &shape), (std::vector<uint8_t>{0, 1, 254, 255}));
  EXPECT_EQ(shape, (Shape{2, 2}));
  EXPECT_EQ(load_npy_i16(golden("i2_4.npy"), &shape),
            (std::vector<int16_t>{-32768, -1, 0, 32767}));
  EXPECT_EQ(load_npy_u16(golden("u2_3.npy"), &shape), (std::vector<uint16_t>{0, 1, 65535}));
  EXPECT_EQ(load_npy_i32(golden("i4_2x1x2.npy"), &shape),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 0,
                                  std::numeric_limits<int32_t>::max()}));
  EXPECT_EQ(shape, (Shape{2, 1, 2}));
  EXPECT_EQ(load_npy_i64(golden("i8_4.npy"), &shape),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0,
                                  std::numeric_limits<int64_t>::max()}));
  const NpyArray u4 = load_npy(golden("u4_2.npy"));
  EXPECT_EQ(u4.dtype, "<u4");
  EXPECT_EQ(as_values<uint32_t>(u4), (std::vector<uint32_t>{0, 0xffffffffu}));
  const NpyArray u8 = load_npy(golden("u8_1.npy"));
  EXPECT_EQ(u8.dtype, "<u8");
  EXPECT_EQ(as_values<uint64_t>(u8), (std::vector<uint64_t>{~uint64_t{0}}));
}

TEST(NpyGolden, ReadsBoolAndHalfAsRawBytes) {
  const NpyArray b = load_npy(golden("b1_3.npy"));
  EXPECT_EQ(b.dtype, "|b1");
  EXPECT_EQ(b.shape, (Shape{3}));
  EXPECT_EQ(as_values<uint8_t>(b), (std::vector<uint8_t>{1, 0, 1}));
  const NpyArray h = load_npy(golden("f2_3.npy"));
  EXPECT_EQ(h.dtype, "<f2");
  EXPECT_EQ(as_values<uint16_t>(h), (std::vector<uint16_t>{0x3c00, 0xc000, 0x3800}));
}

TEST(NpyGolden, ReadsRankZeroAndZeroSize) {
  Shape shape{9};
  EXPECT_EQ(load_npy_f32(golden("f4_scalar.npy"), &shape), (std::vector<float>{3.25f}));
  EXPECT_EQ(shape, Shape{});
  EXPECT_TRUE(load_npy_f32(golden("f4_0x3.npy"), &shape).empty());
  EXPECT_EQ(shape, (Shape{0, 3}));
  EXPECT_TRUE(load_npy_f32(golden("f4_12345x0.npy"), &shape).empty());
  EXPECT_EQ(shape, (Shape{12345, 0}));
}

TEST(NpyGolden, ReadsFormatVersions2And3) {
  Shape shape;
  EXPECT_EQ(read_bytes(golden("i4_v2.npy"))[6], '\x02');
  EXPECT_EQ(load_npy_i32(golden("i4_v2.npy"), &shape), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(read_bytes(golden("f4_v3.npy"))[6], '\x03');
  EXPECT_EQ(load_npy_f32(golden("f4_v3.npy"), &shape), (std::vector<float>{1.0f, 2.0f}));
}

TEST(NpyGolden, RefusesWhatFixqCannotRepresent) {
  expect_error([] { load_npy(golden("f4_fortran.npy")); }, "f4_fortran.npy", "fortran_order",
               "C order");
  expect_error([] { load_npy(golden("f4_big_endian.npy")); }, "f4_big_endian.npy",
               "big-endian", "'>f4'");
  expect_error([] { load_npy(golden("structured.npy")); }, "structured.npy", "structured");
  expect_error([] { load_npy(golden("unicode.npy")); }, "unicode.npy", "unsupported dtype",
               "'<U2'");
}

TEST(NpyGolden, RewritingReproducesNumpyByteForByte) {
  const std::string scratch = ::testing::TempDir() + "fixq_npy_golden_rewrite_" +
                              std::to_string(::getpid()) + ".npy";
  for (const char* name : {"f4_2x3.npy", "f8_3.npy", "f2_3.npy", "i1_4.npy", "u1_2x2.npy",
                           "i2_4.npy", "u2_3.npy", "i4_2x1x2.npy", "u4_2.npy", "i8_4.npy",
                           "u8_1.npy", "b1_3.npy", "f4_scalar.npy", "f4_0x3.npy",
                           "f4_12345x0.npy"}) {
    save_npy(scratch, load_npy(golden(name)));
    EXPECT_EQ(read_bytes(scratch), read_bytes(golden(name))) << name;
  }
  std::remove(scratch.c_str());
}

}  // namespace
}  // namespace fixq
