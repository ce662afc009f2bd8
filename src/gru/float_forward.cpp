// gru_forward: the float GRU over whole sequences, layer by layer and direction by
// direction, each step computed for the batch items still running (see fixq/gru.h).
#include <algorithm>
#include <vector>

#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/float_inputs.h"
#include "gru/float_step.h"

namespace fixq {
namespace {

// Where element (t, b, 0) of a [T, B, width] sequence lies, time-major or batch-first.
struct SeqLayout {
  int64_t T = 0, B = 0, width = 0;
  bool batch_first = false;
  int64_t offset(int64_t t, int64_t b) const { return (batch_first ? b * T + t : t * B + b) * width; }
};

// One direction of one layer over the whole sequence: h [B, H] holds the initial state and
// ends as the final one; item b's h_t goes to columns [out_col, out_col + H) of out(t, b).
// Only the items with t < length are gathered into the rows of a step, so padding is
// neither computed nor written, and the reverse direction of an item starts at its last
// real step.
void run_direction(const GruCell& cell, const float* in, const SeqLayout& in_layout, float* out,
                   const SeqLayout& out_layout, int64_t out_col, const std::vector<int64_t>& lengths,
                   bool reverse, float* h, gru_float::TapSite site) {
  const int64_t C = cell.input_size, H = cell.hidden_size, T = in_layout.T, B = in_layout.B;
  std::vector<int64_t> running;
  std::vector<float> xs, hs;
  gru_float::StepScratch scratch;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    running.clear();
    for (int64_t b = 0; b < B; ++b)
      if (t < lengths[static_cast<std::size_t>(b)]) running.push_back(b);
    if (running.empty()) continue;
    const auto rows = static_cast<int64_t>(running.size());
    xs.resize(static_cast<std::size_t>(rows * C));
    hs.resize(static_cast<std::size_t>(rows * H));
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t b = running[static_cast<std::size_t>(i)];
      std::copy_n(in + in_layout.offset(t, b), C, xs.data() + i * C);
      std::copy_n(h + b * H, H, hs.data() + i * H);
    }
    site.t = t;
    gru_float::cell_step(cell, rows, xs.data(), hs.data(), scratch, site);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t b = running[static_cast<std::size_t>(i)];
      std::copy_n(hs.data() + i * H, H, h + b * H);
      std::copy_n(hs.data() + i * H, H, out + out_layout.offset(t, b) + out_col);
    }
  }
}

}  // namespace

GruOutput gru_forward(const GruModel& model, const float* x, const Shape& x_shape, const GruRunOptions& opt) {
  model.validate();
  if (x_shape.size() != 3 || x_shape[2] != model.input_size)
    fail("gru_forward: x has shape ", shape_str(x_shape), ", expected ",
         opt.batch_first ? "[B, T, C]" : "[T, B, C]", " with C = input_size = ", model.input_size);
  if (numel(x_shape) > 0 && !x) fail("gru_forward: x is null");
  gru_float::require_finite("gru_forward", "x", x, x_shape);
  const int64_t T = opt.batch_first ? x_shape[1] : x_shape[0];
  const int64_t B = opt.batch_first ? x_shape[0] : x_shape[1];
  const int64_t H = model.hidden_size, D = model.directions(), L = model.num_layers;

  std::vector<int64_t> lengths(static_cast<std::size_t>(B), T);
  if (!opt.lengths.empty()) {
    if (static_cast<int64_t>(opt.lengths.size()) != B)
      fail("gru_forward: ", opt.lengths.size(), " lengths given for a batch of ", B);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = opt.lengths[static_cast<std::size_t>(b)];
      if (len < 0 || len > T)
        fail("gru_forward: lengths[", b, "] = ", len, " is outside [0, T] = [0, ", T, "]");
      lengths[static_cast<std::size_t>(b)] = len;
    }
  }

  const Shape state_shape{L * D, B, H};
  GruOutput out;
  if (opt.h0) {
    gru_float::require_finite("gru_forward", "h0", opt.h0, state_shape);
    out.h_n.assign(opt.h0, opt.h0 + numel(state_shape));
  } else {
    out.h_n.assign(static_cast<std::size_t>(numel(state_shape)), 0.0f);
  }
  out.y.assign(static_cast<std::size_t>(numel(Shape{T, B, D * H})), 0.0f);

  // Layers below the top write into time-major buffers that the next layer reads.
  std::vector<float> below, above;
  const float* in = x;
  SeqLayout in_layout{T, B, model.input_size, opt.batch_first};
  for (int layer = 0; layer < L; ++layer) {
    const bool top = layer == L - 1;
    const SeqLayout out_layout{T, B, D * H, top && opt.batch_first};
    if (!top) above.assign(out.y.size(), 0.0f);
    float* layer_out = top ? out.y.data() : above.data();
    for (int d = 0; d < D; ++d)
      run_direction(model.cell(layer, d), in, in_layout, layer_out, out_layout, d * H, lengths, d == 1,
                    out.h_n.data() + (layer * D + d) * B * H, {opt.tap, layer, d, 0});
    below.swap(above);
    in = below.data();
    in_layout = {T, B, D * H, false};
  }
  return out;
}

}  // namespace fixq
