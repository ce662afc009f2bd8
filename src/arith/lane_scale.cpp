// lane_form / wide_product_form: when a lane form of lane_scale.h equals apply() exactly.
#include "arith/lane_scale.h"

#include <algorithm>
#include <cstdlib>

namespace fixq {

namespace {

constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

int64_t magnitude(int64_t lo, int64_t hi) { return std::max(std::abs(lo), std::abs(hi)); }

// apply() is monotone: the outputs on [lo, hi] fit int32 when both ends do.
bool outputs_fit(const FixedPointScale& s, int64_t lo, int64_t hi) {
  const int64_t a = s.apply(lo), b = s.apply(hi);
  return a >= kI32Min && a <= kI32Max && b >= kI32Min && b <= kI32Max;
}

}  // namespace

std::optional<LaneScale> lane_form(const FixedPointScale& s, int64_t lo, int64_t hi, bool pow2) {
  if (lo > hi || lo < kI32Min || hi > kI32Max || !outputs_fit(s, lo, hi)) return std::nullopt;
  LaneScale l;
  if (pow2) {
    if (s.m != 1) return std::nullopt;
    if (s.shift < 0) {  // a left shift must not leave int32
      if (-s.shift > 30 || magnitude(lo, hi) > (kI32Max >> -s.shift)) return std::nullopt;
      l.left = -s.shift;
      return l;
    }
    l.right = std::min(s.shift, 32);  // >= 32: every int32 input rounds to 0, as with 32
    if (l.right <= 30 && magnitude(lo, hi) + ((int64_t{1} << l.right) >> 1) <= kI32Max) l.add_then_shift = true;
    return l;
  }
  if (s.m < 1 || s.shift < 1) return std::nullopt;
  if (s.shift > 62) {  // |x * m| < 2^62 < 2^(shift-1): the term is 0
    l.m = 0;
    l.right = 1;
    return l;
  }
  l.m = s.m;
  l.right = s.shift;
  return l;
}

std::optional<LaneScale> wide_product_form(const FixedPointScale& s, int64_t lo, int64_t hi, bool pow2) {
  if (lo > hi) return std::nullopt;
  const int64_t p = magnitude(lo, hi);
  if (s.shift > 62 || p >= (int64_t{1} << 38)) return std::nullopt;
  if (pow2 != s.is_pow2() || (!pow2 && s.shift < 9)) return std::nullopt;
  if (s.shift < 0 && (-s.shift > 30 || p > (int64_t{1} << (62 + s.shift)))) return std::nullopt;
  if (!outputs_fit(s, lo, hi)) return std::nullopt;
  return LaneScale{s.m, std::max(-s.shift, 0), std::max(s.shift, 0), false};
}

}  // namespace fixq
