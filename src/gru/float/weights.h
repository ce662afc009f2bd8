// Private: the float GRU's weights in its kernels' packed layout (gru/float/kernels.h).
//
// gru_forward packs W and R once per call (PackedWeights) into storage kept per thread
// between calls, since fresh pages would cost their faults on every call; the views nest
// (a tap that runs gru_forward gets storage of its own). Packing reads the weights once,
// about what one step of a product with them costs, and the packed panels are what let the
// kernels keep whole tiles of outputs in registers. GruStream packs them once, when it is
// made (pack_weights into storage of its own).
#pragma once

#include <cstdint>
#include <span>

#include "cpu/aligned_vector.h"
#include "gru/float/kernels.h"

namespace fixq::gru_float {

// into = w [n, k] row-major in the packed layout, by `pack` (its capacity is reused).
void pack_weights(PackFn pack, std::span<const float> w, int64_t n, int64_t k, cpu::AlignedVector<float>& into);

class PackedWeights {
 public:
  PackedWeights(PackFn pack, std::span<const float> w, int64_t n, int64_t k);
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;
  const float* data() const { return data_; }

 private:
  const float* data_;
};

}  // namespace fixq::gru_float
