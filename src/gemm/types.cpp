// Integer element types of the GEMM and the accumulator bounds they imply.
#include <algorithm>

#include "fixq/error.h"
#include "fixq/gemm.h"
#include "gemm/kernels.h"

namespace fixq {

int int_type_bytes(IntType t) { return t == IntType::S16 ? 2 : 1; }

IntRange int_type_range(IntType t) {
  switch (t) {
    case IntType::U8: return {0, 255};
    case IntType::S8: return {-128, 127};
    case IntType::S16: return {-32768, 32767};
  }
  return {0, 0};
}

namespace gemm_detail {

namespace {
int64_t max_abs(IntType t) { return t == IntType::U8 ? 255 : t == IntType::S8 ? 128 : 32768; }
}  // namespace

int64_t block_pairs(IntType a, IntType b) {
  // One pair contributes at most 2 * max|a| * max|b| in magnitude; kc pairs must stay at
  // or below 2^31 - 1.
  const int64_t pair = 2 * max_abs(a) * max_abs(b);
  const int64_t limit = (int64_t{1} << 31) - 1;
  const int64_t kc = limit / pair;
  return std::max<int64_t>(1, std::min<int64_t>(kc, 256));
}

bool fits_int32(IntType a, IntType b, int64_t k) {
  return k * max_abs(a) * max_abs(b) <= (int64_t{1} << 31) - 1;
}

TileKernel tile_kernel_for(Isa isa) {
  if (isa == Isa::Avx2 || isa == Isa::Avx512) return &tile_avx2;
  return &tile_scalar;
}

}  // namespace gemm_detail
}  // namespace fixq
