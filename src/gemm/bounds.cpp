// Integer element types of the GEMM and the accumulator bounds they imply.
#include <algorithm>

#include "fixq/error.h"
#include "fixq/gemm.h"
#include "gemm/kernels.h"

namespace fixq {

IntRange int_type_range(IntType t) {
  switch (t) {
    case IntType::U8: return {0, 255};
    case IntType::S8: return {-128, 127};
    case IntType::S16: return {-32768, 32767};
  }
  return {0, 0};
}

std::string to_string(IntType t) {
  switch (t) {
    case IntType::U8: return "uint8";
    case IntType::S8: return "int8";
    case IntType::S16: return "int16";
  }
  return "unknown";
}

IntType parse_int_type(std::string_view name) {
  for (IntType t : {IntType::U8, IntType::S8, IntType::S16})
    if (name == to_string(t)) return t;
  fail("integer type must be uint8, int8 or int16, got '", name, "'");
}

namespace gemm_detail {

int64_t max_abs(IntType t) { return t == IntType::U8 ? 255 : t == IntType::S8 ? 128 : 32768; }

int64_t max_block_groups(IntType a, IntType b, int kr) {
  // Packed 8-bit A holds s8 shifted to u8 (Quads8), so take 255 for every 8-bit A; a group
  // contributes at most kr * max|a| * max|b| in magnitude, and the sum of a block must stay
  // at or below 2^31 - 1.
  const int64_t a_max = a == IntType::S16 ? 32768 : 255;
  const int64_t group = kr * a_max * max_abs(b);
  return std::max<int64_t>(1, ((int64_t{1} << 31) - 1) / group);
}

bool fits_int32(IntType a, const PackedB& b) { return max_abs(a) * b.max_abs_row_sum() <= (int64_t{1} << 31) - 1; }

}  // namespace gemm_detail
}  // namespace fixq
