// Private: the canonical layout of PackedWeights as the kernels see it (documented in
// fixq/weightonly.h), and the kernel table.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/registry.h"
#include "fixq/weightonly.h"

namespace fixq::weightonly_detail {

inline constexpr int64_t kPanel = 32;  // columns per panel: four 8-lane vectors

// Everything a matmul kernel reads. Canonical row r of group r / group_size; word row
// r / per of panel p at words + (p * word_rows + r / per) * kPanel; scales and zeros of
// group g at + g * panels * kPanel.
struct View {
  int bits;
  int64_t k, n, group_size, groups, panels;
  const uint32_t* words;
  const float* scales;
  const int32_t* zeros;

  int per_word() const { return 32 / bits; }
  int64_t word_rows() const { return k / per_word(); }
  int64_t padded_cols() const { return panels * kPanel; }
};

struct Access {
  static View view(const PackedWeights& w) {
    return {w.bits_, w.k_, w.n_, w.group_size_, w.groups(), (w.n_ + kPanel - 1) / kPanel,
            w.words_.data(), w.scales_.data(), w.zeros_.data()};
  }
  static const std::vector<int32_t>& perm(const PackedWeights& w) { return w.perm_; }
};

// y [m, n] = x [m, k] · W with x's columns already in canonical row order. The contract
// and error bound are weight_only_matmul's (fixq/weightonly.h).
using MatmulKernel = void (*)(const float* x, int64_t m, const View& w, float* y);

// One instruction-set family's kernels. A null kernel is inherited from the next family.
struct PackedKernels {
  MatmulKernel matmul;
};

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(PackedKernels, kPacked)

// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<PackedKernels>& registry();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (registry.cpp).
std::vector<KernelChoice> report_kernels();


}  // namespace fixq::weightonly_detail
