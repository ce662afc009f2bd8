// GruStream: the float GRU one frame at a time, through the same step as gru_forward.
#include <vector>

#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/float/inputs.h"
#include "gru/float/step.h"
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
  const GruModel& m = *model_;
  if (!x) fail("GruStream::step: x is null");
  gru_float::require_finite("GruStream::step", "x", x, Shape{batch_, m.input_size});
  const int64_t H = m.hidden_size;
  const gru_float::ActiveKernels& kernels = packed_->kernels;
  std::vector<float> wx(static_cast<std::size_t>(batch_ * 3 * H));
  gru_float::StepScratch scratch;
  // Each layer's new state is the next layer's input, as gru_forward's layer outputs are.
  const float* in = x;
  for (int layer = 0; layer < m.num_layers; ++layer) {
    const GruCell& cell = m.cell(layer, 0);
    float* h = h_.data() + layer * batch_ * H;
    const auto l = static_cast<std::size_t>(layer);
    gru_float::input_projection(cell, packed_->cells[l].w, kernels, batch_, in, wx.data());
    gru_float::recurrent_step(cell, packed_->cells[l].r, kernels, batch_, in, wx.data(), h, scratch, {});
    in = h;
  }
  return std::vector<float>(in, in + batch_ * H);
}

}  // namespace fixq
