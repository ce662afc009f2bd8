// Private: the kernel tables behind fixq/bf16.h, one per instruction-set family. The scalar
// table (kernels_scalar.cpp, on step.h) is the definition; every other family gives the
// same bits for every input.
#pragma once

#include <cstdint>

#include "cpu/registry.h"

namespace fixq::bf16_detail {

// Panels of 32 weight rows, pair-interleaved (fixq::bf16::PackedB).
inline constexpr int64_t kPanel = 32;
// The dot product's accumulators (fixq/bf16.h): 4 vectors of 16 lanes.
inline constexpr int64_t kDotLanes = 64;

struct Bf16Kernels {
  // dot(a, b) of k elements each, as fixq/bf16.h defines it.
  using Dot = float (*)(const uint16_t* a, const uint16_t* b, int64_t k);
  // C (m x n, ldc) = A (m x k, lda) times the packed weights (ceil(n / 32) panels of
  // ceil(k / 2) pairs).
  using Gemm = void (*)(const uint16_t* a, int64_t m, int64_t lda, const uint32_t* packed, int64_t n, int64_t k,
                        float* c, int64_t ldc);
  Dot dot;
  Gemm gemm;
};

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(Bf16Kernels, kBf16)

// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<Bf16Kernels>& registry();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (registry.cpp).
std::vector<KernelChoice> report_kernels();


// A block of at least n uint32 for this thread's packed A, kept between calls (scratch.cpp).
// It lives in a file compiled for the baseline ISA: growing a std::vector<uint32_t> in a
// kernel file would emit its members as COMDAT code with that file's instructions, which
// the linker may then pick for every caller (tests/cpu/isa_objects_check.py).
uint32_t* a_block_of_thread(int64_t n);

// Pair p of a row of k bf16 values: element 2p in the low half, 2p + 1 (or +0 past k) in
// the high half: the dword vdpbf16ps reads.
inline uint32_t pair_at(const uint16_t* row, int64_t k, int64_t p) {
  const int64_t i = 2 * p;
  return uint32_t{row[i]} | (i + 1 < k ? uint32_t{row[i + 1]} << 16 : 0u);
}

}  // namespace fixq::bf16_detail
