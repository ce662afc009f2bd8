// Private: the float GRU's weights on 64-byte boundaries for the length of one call.
//
// Why: GruCell holds W and R in std::vector, whose large blocks start 16 bytes past a cache
// line (glibc), so every 64-byte load of a weight row straddles two lines. With aligned
// copies gru_forward ran 15% faster at H = 256, batch 1 (19.4 -> 16.5 us/step), and 5% at
// batch 16 (Intel Xeon, AVX-512 tiles, old and new alternated).
#pragma once

#include <cstdint>
#include <span>

namespace fixq::gru_float {

// A call's view of v: v itself where it already starts on a cache line or the copy would
// not repay itself, else an aligned copy. A copy reads v once, about what one row of a
// product with it costs, and saves a tenth or more of each row's time: it is made for at
// least kMinRows rows. The copies' storage is kept per thread between calls, since fresh
// pages would cost their faults on every call; the views nest (a tap that runs
// gru_forward gets storage of its own).
class AlignedWeights {
 public:
  static constexpr int64_t kMinRows = 16;
  AlignedWeights(std::span<const float> v, int64_t rows);
  ~AlignedWeights();
  AlignedWeights(const AlignedWeights&) = delete;
  AlignedWeights& operator=(const AlignedWeights&) = delete;
  const float* data() const { return data_; }

 private:
  const float* data_;
  bool copied_ = false;
};

}  // namespace fixq::gru_float
