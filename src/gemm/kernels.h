// Private: the GEMM tile kernels and the packed-A layout they read.
//
// A is packed per call into int16 pairs: apack[m * kp_stride + kp] holds A[m, 2kp] in the
// low and A[m, 2kp+1] in the high 16 bits (K padded to even with 0), so one 32-bit
// broadcast feeds vpmaddwd. A tile kernel computes, for mr <= kMaxMr rows and the 16
// columns of one B panel, the int32 sums over kc k-pairs starting at kp0 and stores them
// to tile[r * 16 + j]. The caller chooses kc so that no int32 partial sum can overflow
// (see block_pairs()); every kernel then returns the exact same integers.
#pragma once

#include <cstdint>

#include "fixq/cpu.h"
#include "fixq/gemm.h"

namespace fixq::gemm_detail {

constexpr int kMaxMr = 4;
constexpr int kNr = 16;

struct TileArgs {
  const int32_t* a;    // apack + row0 * kp_stride + kp0
  int64_t kp_stride;   // int32 elements between rows of apack
  int mr;              // rows, 1..kMaxMr
  const void* b;       // B panel, advanced to k-pair kp0
  bool b16;            // B panel holds int16 (S16 weights) instead of int8
  int64_t kc;          // k-pairs to sum
  int32_t* tile;       // [mr][16] int32 results (overwritten)
};

using TileKernel = void (*)(const TileArgs&);

void tile_scalar(const TileArgs& t);
void tile_avx2(const TileArgs& t);

// The kernel for this instruction set (the AVX-512 machines use the AVX2 kernel until a
// VNNI kernel exists).
TileKernel tile_kernel_for(Isa isa);

// The largest number of k-pairs whose int32 partial sums cannot overflow for these types
// (at most 256, so a B panel slice of 8-16 KiB stays in L1), and whether the whole K fits in int32. S16 x S16
// is not supported (one pair can reach 2^31), so these are only asked for other pairs.
int64_t block_pairs(IntType a, IntType b);
bool fits_int32(IntType a, IntType b, int64_t k);

}  // namespace fixq::gemm_detail
