// fixq/tensor.h — shapes of the dense row-major tensors fixq reads and writes.
//
// fixq's array functions take a plain pointer plus a Shape (row-major, contiguous, last
// axis fastest). These helpers validate shapes once, so kernels can trust them.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "fixq/error.h"

namespace fixq {

using Shape = std::vector<int64_t>;

// Number of elements; throws fixq::Error for a negative extent or an element count that
// does not fit in int64. A shape of rank 0 is a scalar (one element).
int64_t numel(const Shape& shape);

// "[2, 3, 4]", for error messages.
std::string shape_str(const Shape& shape);

// Normalizes a possibly negative axis (-1 = last) against rank; throws if out of range.
int normalize_axis(int axis, int rank);

// Splits shape around axis into (outer, axis extent, inner): element (o, a, i) sits at
// flat index (o * extent + a) * inner + i.
struct AxisSplit {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, int axis);

// Size arithmetic on numbers that come from files or callers (extents, element and byte
// counts, offsets): the exact result, or a fixq::Error, never a wrapped value (for int64 a
// wrap is undefined behaviour; for uint64 a wrong size). `what` names the quantity, and
// its parts are joined into the message only on failure:
//   checked_mul(numel(s), 2, "the byte count of bf16 values of shape ", shape_str(s))
//   -> "the byte count of bf16 values of shape [2, 3617348584308239977] overflows int64
//       (7234697168616479954 * 2)"
template <std::integral T, class... What>
T checked_mul(T a, std::type_identity_t<T> b, const What&... what);
template <std::integral T, class... What>
T checked_add(T a, std::type_identity_t<T> b, const What&... what);

// Whether a == k * b exactly, for shape tests such as "R is [3 * H, H]": false where k * b
// overflows int64 (a cannot equal it then), so a file's absurd extent fails the test
// instead of wrapping. k > 0.
constexpr bool is_product(int64_t a, int64_t k, int64_t b) { return a % k == 0 && a / k == b; }

namespace detail {
template <std::integral T>
constexpr const char* int_type_name() {
  if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, uint64_t>) return "uint64";
  else if constexpr (std::is_signed_v<T>) return "its signed type";
  else return "its unsigned type";
}
template <std::integral T, class... What>
[[noreturn]] void fail_overflow(T a, T b, const char* op, const What&... what) {
  fail(what..., " overflows ", int_type_name<T>(), " (", a, op, b, ")");
}
}  // namespace detail

template <std::integral T, class... What>
T checked_mul(T a, std::type_identity_t<T> b, const What&... what) {
  static_assert(sizeof...(What) > 0, "checked_mul: name the quantity for the message");
  T r;
  if (__builtin_mul_overflow(a, b, &r)) detail::fail_overflow<T>(a, b, " * ", what...);
  return r;
}

template <std::integral T, class... What>
T checked_add(T a, std::type_identity_t<T> b, const What&... what) {
  static_assert(sizeof...(What) > 0, "checked_add: name the quantity for the message");
  T r;
  if (__builtin_add_overflow(a, b, &r)) detail::fail_overflow<T>(a, b, " + ", what...);
  return r;
}

}  // namespace fixq
