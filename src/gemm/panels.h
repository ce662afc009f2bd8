// Private: what a PackedB holds (fixq/gemm.h): the weights as given, their column sums,
// and the layouts kernels asked for, packed once each.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "fixq/gemm.h"
#include "gemm/kernels.h"

namespace fixq {

struct PackedB::Store {
  IntType type = IntType::S8;
  int64_t n = 0, k = 0;
  std::vector<int16_t> weights;  // B [N, K] row-major (int8 weights widened)
  std::vector<int64_t> colsum;
  int64_t max_abs_row_sum = 0;

  // The panels in this format, packed on first use (thread-safe; later calls are one
  // atomic load per cached format).
  const gemm_detail::PackedPanels& panels(const gemm_detail::PanelFormat& f) const;

  ~Store();

 private:
  static constexpr int kSlots = 8;
  mutable std::array<std::atomic<const gemm_detail::PackedPanels*>, kSlots> slots_{};
  mutable std::mutex mutex_;
};

}  // namespace fixq
