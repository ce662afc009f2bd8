// Private: the state of a QuantizedGru.
#pragma once

#include <vector>

#include "fixq/qgru.h"
#include "gru/q_plan.h"

namespace fixq {

struct QuantizedGru::Impl {
  GruQuantParams params;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int num_layers = 1;
  bool bidirectional = false;
  std::vector<gru_detail::CellPlan> plans;  // [layer * D + direction]

  int directions() const { return bidirectional ? 2 : 1; }

  // Each cell's initial integer state [B, H]: h0 ([L*D, B, H] floats) quantized with the
  // cell's h parameters, or real 0 (the zero point) when h0 is null.
  std::vector<std::vector<char>> initial_state(const float* h0, int64_t batch) const;
  // The integer network: layer 0's input already quantized ([T, B, C] in its x storage),
  // every layer in turn, states updated in place. Returns the top layer's outputs per
  // direction, [T, B, H] in that cell's h storage (padding left at the zero point).
  std::vector<std::vector<char>> run_layers(std::vector<char> layer_in, int64_t T, int64_t B,
                                            const std::vector<int64_t>& lengths,
                                            std::vector<std::vector<char>>& state) const;
  // x [n] quantized with layer 0's x parameters into its storage.
  std::vector<char> quantize_input(const float* x, int64_t n) const;
  // One integer value of cell c's h, dequantized.
  float dequantize_h(size_t c, const std::vector<char>& q, int64_t i) const;
};

}  // namespace fixq
