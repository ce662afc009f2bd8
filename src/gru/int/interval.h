// Private: integer intervals, the domain in which build_fast_plan evaluates the unit update
// to prove that vector lanes hold every intermediate exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "fixq/arith.h"

namespace fixq::gru_detail {

inline constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

struct Interval {
  int64_t lo = 0, hi = 0;
  bool in_int32() const { return lo >= kI32Min && hi <= kI32Max; }
  bool in_int16() const { return lo >= INT16_MIN && hi <= INT16_MAX; }
  int64_t magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }
};

// The interval of a * b (operands within int32 ranges of a few bits more at most).
inline Interval product(Interval a, Interval b) {
  const int64_t c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};  // |each| <= 2^34
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// The output interval of a monotone scale applied on [lo, hi].
inline Interval applied(const FixedPointScale& s, Interval x) { return {s.apply(x.lo), s.apply(x.hi)}; }

}  // namespace fixq::gru_detail
