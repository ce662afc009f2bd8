// Private: FixedPointScale (fixq/arith.h) in the form int32 vector lanes evaluate it.
//
// FixedPointScale::apply rounds x * m / 2^shift half up in 64 or 128 bits. Vector lanes
// hold int32 (and, two at a time, int64), so a vector kernel may use a scale only on a
// known interval of inputs, where one of the lane forms below gives exactly apply's
// result. lane_form() / wide_product_form() choose the form from the interval, or refuse.
//
// The scalar functions here are the definition of each lane form, operation for operation;
// lane_scale_lanes.h implements the same names on any family's vectors (as gemmlowp's
// fixedpoint.h and its SIMD siblings), and the tests hold all three to apply().
#pragma once

#include <cstdint>
#include <optional>

#include "fixq/arith.h"

namespace fixq {

// round_half_up(x * m * 2^left / 2^right) in lanes.
//   power-of-two scales: m == 1; a left shift (left <= 30) or a right shift (right <= 32;
//     a larger shift gives 0 for every int32 input, as 32 does). add_then_shift: the input
//     leaves room for the rounding constant, so (x + 2^(right-1)) >> right cannot overflow.
//   multiplier scales: left == 0, right in [1, 62], m the 31-bit multiplier; a scale whose
//     shift exceeds 62 gives 0 for every int32 input and is held as m == 0, right == 1.
struct LaneScale {
  int32_t m = 1;
  int32_t left = 0;
  int32_t right = 0;
  bool add_then_shift = false;
  friend bool operator==(const LaneScale&, const LaneScale&) = default;
};

// The lane form of s for every input in [lo, hi] (for pow2 plans, s must be a power of
// two), or nothing when no lane form is exact there or an output leaves int32.
std::optional<LaneScale> lane_form(const FixedPointScale& s, int64_t lo, int64_t hi, bool pow2);

// The lane form of s(a * b) for products in [lo, hi] that may leave int32 (a "wide"
// product, computed in 64-bit lanes): power-of-two scales shift the 64-bit product
// (right <= 62, left <= 30 without leaving int64); multiplier scales use the split-product
// identity below, which needs |p| < 2^38 and right in [9, 62]. Nothing when an output
// leaves int32.
std::optional<LaneScale> wide_product_form(const FixedPointScale& s, int64_t lo, int64_t hi, bool pow2);

// floor((q + 2^(s-1)) / 2^s), s in [1, 62], |q| < 2^62: the 64-bit lanes' rounding shift
// (the addition cannot overflow under these bounds).
constexpr int64_t lane_rounding_shift64(int64_t q, int s) { return (q + (int64_t{1} << (s - 1))) >> s; }

// Power-of-two lane form: (x + 2^(r-1)) >> r when add_then_shift, else
// (x << left) >> right plus bit right - 1 of (x << left); shifts of 32 and more give the
// sign fill, which with the rounding bit yields 0 as the exact result does.
constexpr int32_t lane_apply_pow2(int32_t x, const LaneScale& l) {
  if (l.add_then_shift) return (x + (l.right > 0 ? int32_t{1} << (l.right - 1) : 0)) >> l.right;
  const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(x) << l.left);
  auto sra = [](int32_t a, int s) { return s >= 32 ? (a < 0 ? -1 : 0) : a >> s; };
  const int32_t bit = l.right > 0 ? (sra(v, l.right - 1) & 1) : 0;
  return sra(v, l.right) + bit;
}

// Multiplier lane form: the 64-bit product x * m, rounded at `right` bits.
constexpr int32_t lane_apply_multiplier(int32_t x, const LaneScale& l) {
  return static_cast<int32_t>(lane_rounding_shift64(int64_t{x} * l.m, l.right));
}

// Wide product, power-of-two: (a * b) << left in 64 bits, then rounded at `right` bits
// (right == 0: the product itself).
constexpr int32_t lane_apply_wide_pow2(int32_t a, int32_t b, const LaneScale& l) {
  const int64_t p = static_cast<int64_t>(static_cast<uint64_t>(int64_t{a} * b) << l.left);
  return static_cast<int32_t>(l.right == 0 ? p : lane_rounding_shift64(p, l.right));
}

// Wide product, multiplier: the split-product identity. With p = hi * 2^8 + lo (0 <= lo <
// 2^8), floor((p m + 2^(r-1)) / 2^r) = floor((hi m + floor((lo m + 2^(r-1)) / 2^8)) / 2^(r-8))
// for r >= 9, and every part fits int64 for |p| < 2^38, m < 2^31.
constexpr int32_t lane_apply_wide_multiplier(int32_t a, int32_t b, const LaneScale& l) {
  const int64_t p = int64_t{a} * b;
  const int64_t hi = p >> 8, lo = p & 0xFF;
  const int64_t low_part = (lo * l.m + (int64_t{1} << (l.right - 1))) >> 8;
  return static_cast<int32_t>((hi * l.m + low_part) >> (l.right - 8));
}

}  // namespace fixq
