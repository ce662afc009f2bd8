// Private: the blocked GEMM loops shared by every output kind.
#pragma once

#include <cstdint>
#include <string>

#include "fixq/gemm.h"

namespace fixq::gemm_detail {

// Throws fixq::Error unless A and B form a supported, well-formed product.
void validate(const MatrixView& a, const PackedB& b);

struct MicroKernel;
struct PackedPanels;

// A product bound to its kernel and packed weights: what a caller that multiplies many
// activation blocks by the same weights (a GRU step after step) looks up once.
struct BoundProduct {
  const MicroKernel* kern = nullptr;
  const PackedPanels* panels = nullptr;
  IntType a_type = IntType::U8;
  IntType b_type = IntType::S8;
  int64_t n = 0, k = 0;
  int64_t kc = 0;              // k-groups per block
  bool whole_k_fits = false;   // every running sum fits int32 (fits_int32)
  bool shifted = false;        // s8 A is shifted to u8: start from -128 * colsum
};
// rows: the rows of A the product will have (0: unknown, taken as few), which may choose
// a kernel for many rows (kernels.h: kManyRows).
BoundProduct bind(IntType a, const PackedB& b, int64_t rows = 0);

// Exact accumulators A * B^T into c [M, N] (row stride ldc), Acc = int32_t or int64_t.
// For int32_t the caller has checked fits_int32. A's type and K must be the bound ones.
// The weights' column panels run last to first where `reverse_panels` says so: a caller
// that multiplies by the same weights again and again (a GRU's recurrent product, step after
// step) alternates the order, so that each call starts on the panels the last one read last,
// still in L2 or L1 (the same integers: every panel's columns are computed alone). Where B
// stays in L2 (cpu/cache.h), only kernels that gain from it honour it
// (MicroKernel::reverse_within_l2).
template <class Acc>
void accumulate(const BoundProduct& p, const MatrixView& a, Acc* c, int64_t ldc, bool reverse_panels = false);
template <class Acc>
void accumulate(const MatrixView& a, const PackedB& b, Acc* c, int64_t ldc) {
  accumulate(bind(a.type, b, a.rows), a, c, ldc);
}

// The micro-kernel the active features select for these operand types and rows, by name.
std::string kernel_name(IntType a, IntType b, int64_t rows = 0);
// And its rows of A per tile (AMX: 16; AVX-512: 6, or 3 rows of 16-bit A).
int64_t rows_per_tile(IntType a, IntType b, int64_t rows);

}  // namespace fixq::gemm_detail
