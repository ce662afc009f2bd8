// Private: the float GRU's weights in its kernels' packed layout (gru/float/kernels.h).
//
// gru_forward packs W and R once per call (PackedWeights) into storage kept per thread
// between calls, since fresh pages would cost their faults on every call; the views nest
// (a tap that runs gru_forward gets storage of its own). Packing reads the weights once,
// about what one step of a product with them costs, and the packed panels are what let the
// kernels keep whole tiles of outputs in registers. FloatGru and GruStream pack them once,
// when they are made (PackedModel, storage of their own).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/aligned_vector.h"
#include "fixq/gru.h"
#include "gru/float/kernels.h"

namespace fixq::gru_float {

// One cell's W [3H, C] and R [3H, H], packed.
struct PackedCell {
  const float* w = nullptr;
  const float* r = nullptr;
};

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

// Every cell's W and R packed once by one family's kernels, in storage of its own: the
// kernels must stay those that packed them (the layout is theirs).
struct PackedModel {
  ActiveKernels kernels;
  std::vector<cpu::AlignedVector<float>> w, r;  // per cell, [layer * D + direction]
  std::vector<PackedCell> cells;                // views of w and r

  PackedModel(const GruModel& model, const ActiveKernels& kernels);  // model validated by the caller
  PackedModel(const PackedModel&) = delete;
  PackedModel& operator=(const PackedModel&) = delete;
};

}  // namespace fixq::gru_float
