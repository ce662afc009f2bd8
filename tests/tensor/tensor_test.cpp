// fixq/tensor.h: element counts, axis normalisation and splits, against values worked out
// by hand, and the errors for shapes no tensor can have.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "fixq/error.h"
#include "fixq/tensor.h"

namespace {

using fixq::Shape;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const fixq::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Tensor, NumelIsTheProductAndRankZeroIsAScalar) {
  EXPECT_EQ(fixq::numel(Shape{}), 1);
  EXPECT_EQ(fixq::numel(Shape{2, 3, 4}), 24);
  EXPECT_EQ(fixq::numel(Shape{5, 0, 7}), 0);
  // The largest product that fits: 2^62 * 1, and 3037000499^2 < 2^63 - 1.
  EXPECT_EQ(fixq::numel(Shape{int64_t{1} << 62, 1}), int64_t{1} << 62);
  EXPECT_EQ(fixq::numel(Shape{3037000499, 3037000499}), int64_t{3037000499} * 3037000499);
}

TEST(Tensor, NumelNamesNegativeExtentsAndOverflow) {
  EXPECT_NE(error_of([] { fixq::numel(Shape{2, -1}); }).find("negative extent at axis 1"), std::string::npos);
  EXPECT_NE(error_of([] { fixq::numel(Shape{3037000500, 3037000500}); }).find("more elements than fit in int64"),
            std::string::npos);
  // A zero extent after an overflowing prefix is still an absurd shape: the check runs in order.
  EXPECT_NE(error_of([] { fixq::numel(Shape{int64_t{1} << 40, int64_t{1} << 40, 0}); }).find("int64"),
            std::string::npos);
}

TEST(Tensor, ShapeStr) {
  EXPECT_EQ(fixq::shape_str(Shape{}), "[]");
  EXPECT_EQ(fixq::shape_str(Shape{2, 3, 4}), "[2, 3, 4]");
}

TEST(Tensor, AxesFromTheEndAndOutOfRange) {
  EXPECT_EQ(fixq::normalize_axis(-1, 3), 2);
  EXPECT_EQ(fixq::normalize_axis(-3, 3), 0);
  EXPECT_EQ(fixq::normalize_axis(1, 3), 1);
  EXPECT_NE(error_of([] { fixq::normalize_axis(3, 3); }).find("axis 3 is out of range for a tensor of rank 3"),
            std::string::npos);
  EXPECT_NE(error_of([] { fixq::normalize_axis(-4, 3); }).find("axis -4"), std::string::npos);
  EXPECT_NE(error_of([] { fixq::normalize_axis(0, 0); }).find("rank-0"), std::string::npos);
}

TEST(Tensor, SplitAtAxisPlacesElementsAsRowMajorDoes) {
  const fixq::AxisSplit s = fixq::split_at_axis(Shape{2, 3, 4, 5}, 2);
  EXPECT_EQ(s.outer, 6);
  EXPECT_EQ(s.extent, 4);
  EXPECT_EQ(s.inner, 5);
  // Element (1, 2, 3, 4) of [2, 3, 4, 5] is at flat index ((1 * 3 + 2) * 4 + 3) * 5 + 4 = 119,
  // and at (outer 1 * 3 + 2, axis 3, inner 4) in the split.
  EXPECT_EQ(((1 * 3 + 2) * s.extent + 3) * s.inner + 4, 119);
  const fixq::AxisSplit last = fixq::split_at_axis(Shape{7, 9}, -1);
  EXPECT_EQ(last.outer, 7);
  EXPECT_EQ(last.extent, 9);
  EXPECT_EQ(last.inner, 1);
  EXPECT_NE(error_of([] { fixq::split_at_axis(Shape{int64_t{1} << 40, int64_t{1} << 40}, 0); }).find("int64"),
            std::string::npos);
}

// checked_mul / checked_add: the exact value up to the type's limit, one past it an error
// naming the quantity and both operands; is_product by exact division, so k * b that would
// overflow is simply not a.
TEST(Tensor, CheckedArithmeticIsExactOrNamesTheOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(fixq::checked_mul(int64_t{3037000499}, 3037000499, "x"), int64_t{3037000499} * 3037000499);
  EXPECT_EQ(fixq::checked_mul(kMax / 2, 2, "x"), kMax - 1);
  EXPECT_EQ(fixq::checked_mul(kMax, 0, "x"), 0);
  EXPECT_EQ(fixq::checked_mul(int64_t{-4}, 5, "x"), -20);
  EXPECT_EQ(fixq::checked_add(kMax - 5, 5, "x"), kMax);
  EXPECT_EQ(error_of([] { fixq::checked_mul(int64_t{7234697168616479954}, 2, "the byte count of bf16 values of shape ", "[2, 3617348584308239977]"); }),
            "the byte count of bf16 values of shape [2, 3617348584308239977] overflows int64 (7234697168616479954 * 2)");
  EXPECT_EQ(error_of([] { fixq::checked_mul(kMax / 2 + 1, 2, "n"); }), "n overflows int64 (4611686018427387904 * 2)");
  EXPECT_EQ(error_of([] { fixq::checked_add(kMax - 4, 5, "the offset of tensor '", "w", "'"); }),
            "the offset of tensor 'w' overflows int64 (9223372036854775803 + 5)");
  EXPECT_EQ(error_of([] { fixq::checked_add(std::numeric_limits<int64_t>::min(), -1, "d"); }),
            "d overflows int64 (-9223372036854775808 + -1)");
  // Unsigned: a wrap is defined there, but still a wrong size.
  constexpr uint64_t kUMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(fixq::checked_add(kUMax - 1, 1, "x"), kUMax);
  EXPECT_EQ(error_of([] { fixq::checked_add(kUMax, 1, "the data offset"); }),
            "the data offset overflows uint64 (18446744073709551615 + 1)");
  EXPECT_EQ(error_of([] { fixq::checked_mul(uint64_t{1} << 32, uint64_t{1} << 32, "m"); }),
            "m overflows uint64 (4294967296 * 4294967296)");

  EXPECT_TRUE(fixq::is_product(12, 3, 4));
  EXPECT_FALSE(fixq::is_product(13, 3, 4));
  EXPECT_FALSE(fixq::is_product(12, 3, 5));
  EXPECT_TRUE(fixq::is_product(0, 3, 0));
  EXPECT_FALSE(fixq::is_product(0, 3, int64_t{1} << 62));  // 3 * 2^62 wraps to -2^62 (as int64), not 0
  EXPECT_FALSE(fixq::is_product(kMax, 3, kMax / 3 + 1));   // 3 * (kMax / 3 + 1) overflows
  EXPECT_TRUE(fixq::is_product(kMax - 1, 3, (kMax - 1) / 3));
}

}  // namespace
