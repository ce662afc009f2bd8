// Private: the state of a QuantizedGru.
#pragma once

#include <vector>

#include "fixq/arith.h"
#include "fixq/qgru.h"
#include "gru/int/plan.h"

namespace fixq {

// The integer sequences of one forward pass. Callers keep one per thread between calls
// (gru/int/forward.cpp): a batch of 16 x 100 steps of H = 256 is megabytes, and fresh buffers of
// that size come from the kernel as zeroed pages on every call, which cost more than a
// tenth of the forward (measured: memset and page faults, `perf` on Zen 5).
struct LayerBuffers {
  std::vector<char> in, next;          // a layer's quantized input [T, B, C]; the next layer's
  std::vector<std::vector<char>> out;  // [direction]: a layer's h sequence [T, B, H]
};

struct QuantizedGru::Impl {
  GruQuantParams params;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int num_layers = 1;
  bool bidirectional = false;
  GruCellKind cell_kind = GruCellKind::ResetAfter;  // every plan's kind
  std::vector<gru_detail::CellPlan> plans;  // [layer * D + direction]

  // Per cell below the top layer whose h is 8-bit, [layer * D + direction]: the next layer's
  // input for each of h's 256 values, at h + 128 (layer_rescale). run_layers' rescale between
  // layers is then one table read per element; computing Rescale per element (64-bit
  // products) took a quarter of a two-layer int8 forward at batch 16. Empty for 16-bit h.
  std::vector<std::vector<int32_t>> next_input_of_h;

  int directions() const { return bidirectional ? 2 : 1; }
  // Once the plans are complete (both ways a model is built): pairs a bidirectional layer's
  // directions and fills next_input_of_h.
  void finish();
  // Cell c's h (integers) into the next layer's x parameters (c below the top layer).
  Rescale layer_rescale(size_t c) const;

  // Each cell's initial integer state [B, H]: h0 ([L*D, B, H] floats) quantized with the
  // cell's h parameters, or real 0 (the zero point) when h0 is null.
  std::vector<std::vector<char>> initial_state(const float* h0, int64_t batch) const;
  // The integer network: layer 0's input already quantized in buf.in ([T, B, C] in its x
  // storage), every layer in turn, states updated in place. Leaves the top layer's outputs
  // per direction in buf.out, [T, B, H] in that cell's h storage (padding at the zero
  // point); buf.in and buf.next are overwritten. pipelined: a unidirectional layer's input
  // projection runs a block of steps ahead on a second thread (run_cell).
  void run_layers(LayerBuffers& buf, int64_t T, int64_t B, const std::vector<int64_t>& lengths,
                  std::vector<std::vector<char>>& state, bool pipelined = false) const;
  // Whether a forward with these options runs on two threads as a pipeline rather than in
  // batch slices: where the slices would fill less than one tile of the GEMM kernel the whole
  // batch takes (AMX: 16 rows), so that halving the batch would not halve the products, and R
  // stays in L2.
  bool pipelines(const Shape& x_shape, const GruRunOptions& opt) const;
  // x [n] quantized with layer 0's x parameters into its storage, in q (resized to fit);
  // fails naming `what` and the first element that is NaN or infinite.
  void quantize_input(const float* x, int64_t n, std::vector<char>& q, const char* what) const;
  // One integer value of cell c's h, dequantized.
  float dequantize_h(size_t c, const std::vector<char>& q, int64_t i) const;
};

// The model's plans for the library's other backends (the GPU's upload, src/cuda/), which
// run the same cells as the CPU loop; the public API stays opaque.
struct QuantizedGruAccess {
  static const QuantizedGru::Impl& impl(const QuantizedGru& q) { return *q.impl_; }
  // A model from complete plans (finish() called): the whole-model file (src/model/file.cpp)
  // stores its GRUs as the GRU file does and rebuilds them with build_plan, tables as stored.
  static QuantizedGru make(std::unique_ptr<QuantizedGru::Impl> impl) { return QuantizedGru(std::move(impl)); }
};

}  // namespace fixq
