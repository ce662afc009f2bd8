// GruStream: the float GRU one frame at a time, through the same step as gru_forward.
#include <algorithm>
#include <vector>

#include "cpu/cache.h"
#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/float/inputs.h"
#include "gru/float/step.h"
#include "gru/float/step_reset_before.h"
#include "gru/float/weights.h"

namespace fixq {

// Packed once per stream: at one frame per call, packing W and R on every step would cost
// more than the step itself.
struct GruStream::Packed : gru_float::PackedModel {
  using PackedModel::PackedModel;
};

GruStream::GruStream(const GruModel& model, int64_t batch, const float* h0) : model_(&model), batch_(batch) {
  model.validate();
  if (model.bidirectional)
    fail("GruStream: a bidirectional GRU needs the whole sequence; run gru_forward instead");
  if (batch < 1) fail("GruStream: batch is ", batch, ", must be at least 1");
  const Shape state_shape{model.num_layers, batch, model.hidden_size};
  if (h0) {
    gru_float::require_finite("GruStream", "h0", h0, state_shape);
    h_.assign(h0, h0 + numel(state_shape));
  } else {
    h_.assign(static_cast<std::size_t>(numel(state_shape)), 0.0f);
  }
  packed_ = std::make_shared<const Packed>(model, gru_float::active_kernels());
}

std::vector<float> GruStream::step(const float* x) {
  std::vector<float> out(static_cast<std::size_t>(batch_ * model_->hidden_size));
  step(x, out.data());
  return out;
}

void GruStream::step(const float* x, float* h_out) {
  const GruModel& m = *model_;
  if (!x) fail("GruStream::step: x is null");
  if (!h_out) fail("GruStream::step: h_out is null");
  gru_float::require_finite("GruStream::step", "x", x, Shape{batch_, m.input_size});
  const int64_t H = m.hidden_size;
  const gru_float::ActiveKernels& kernels = packed_->kernels;
  wx_.resize(static_cast<std::size_t>(batch_ * 3 * H));
  gru_float::StepScratch scratch;
  scratch.rh.swap(rh_);  // the last step's memory
  // Every other frame reads a layer's R and then its W, both last to first, where the two
  // outgrow half of L2 (W + R are 6 MiB at H = 512, 1.5 MiB at H = 256 against 1 MiB of L2 on
  // a Zen 4 or 5 core): each product then starts on what the last frame read last, still in
  // L2, instead of on what it read first, long evicted. The same bits in either order (each
  // output is its own dot product).
  const bool reversed = !last_reversed_;
  // Each layer's new state is the next layer's input, as gru_forward's layer outputs are.
  const float* in = x;
  for (int layer = 0; layer < m.num_layers; ++layer) {
    const GruCell& cell = m.cell(layer, 0);
    float* h = h_.data() + layer * batch_ * H;
    const gru_float::PackedCell& packed = packed_->cells[static_cast<std::size_t>(layer)];
    const auto bytes = static_cast<int64_t>((cell.W.size() + cell.R.size()) * sizeof(float));
    if (m.cell_kind == GruCellKind::ResetBefore) {
      // Two products with R per step (R h, then R_g (r * h)): in order, as gru_forward runs it.
      gru_float::input_projection(cell, packed.w, kernels, batch_, in, wx_.data());
      gru_float::reset_before_step(cell, packed.r, kernels, batch_, in, wx_.data(), h, scratch, {});
    } else if (reversed && !cpu::stays_in_l2(bytes)) {
      gru_float::recurrent_product(cell, packed.r, kernels, batch_, h, scratch, true);
      gru_float::input_projection(cell, packed.w, kernels, batch_, in, wx_.data(), true);
    } else {
      gru_float::input_projection(cell, packed.w, kernels, batch_, in, wx_.data());
      gru_float::recurrent_product(cell, packed.r, kernels, batch_, h, scratch, false);
    }
    if (m.cell_kind != GruCellKind::ResetBefore)
      gru_float::recurrent_gates(cell, kernels, batch_, in, wx_.data(), h, scratch, {});
    in = h;
  }
  last_reversed_ = reversed;
  rh_.swap(scratch.rh);
  if (h_out != in) std::copy(in, in + batch_ * H, h_out);
}

}  // namespace fixq
