// gru_forward: the float GRU over whole sequences, layer by layer and direction by
// direction. Each direction projects its inputs for a block of steps at once (one matmul
// of many rows, W read once per block), then runs the steps, each for the batch items
// still running (see fixq/gru.h).
#include <algorithm>
#include <vector>

#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/batch_split.h"
#include "gru/float/inputs.h"
#include "gru/float/step.h"
#include "gru/float/weights.h"

namespace fixq {
namespace {

// Where element (t, b, 0) of a [T, B, width] sequence lies, time-major or batch-first.
struct SeqLayout {
  int64_t T = 0, B = 0, width = 0;
  bool batch_first = false;
  int64_t offset(int64_t t, int64_t b) const { return (batch_first ? b * T + t : t * B + b) * width; }
};

// Rows of the input projection per block: enough that the weights are read once for many
// rows, few enough that the block's Wx stays a few MiB.
constexpr int64_t kProjectionRows = 256;

// One direction of one layer over the whole sequence: `in` is time-major [T, B, C]; h [B, H]
// holds the initial state and ends as the final one; item b's h_t goes to columns
// [out_col, out_col + H) of out(t, b). Only the items with t < length take part in a
// step, so padding is neither computed into the state nor written, and the reverse
// direction of an item starts at its last real step.
void run_direction(const GruCell& cell, const gru_float::ActiveKernels& k, const float* in, int64_t T, int64_t B,
                   float* out, const SeqLayout& out_layout, int64_t out_col, const std::vector<int64_t>& lengths,
                   bool reverse, float* h, gru_float::TapSite site) {
  const int64_t C = cell.input_size, H = cell.hidden_size, H3 = 3 * H;
  const int64_t block_steps = std::clamp<int64_t>(kProjectionRows / B, 1, std::max<int64_t>(T, 1));
  std::vector<float> wx(static_cast<std::size_t>(std::min(block_steps, T) * B * H3));
  std::vector<int64_t> running;
  std::vector<float> xs, wxs, hs;
  gru_float::StepScratch scratch;
  const bool tapped = site.active();
  const gru_float::PackedWeights r(k.pack, cell.R, H3, H), w(k.pack, cell.W, H3, C);
  for (int64_t s0 = 0; s0 < T; s0 += block_steps) {
    const int64_t s1 = std::min(T, s0 + block_steps);
    // The block's steps are the times [t_lo, t_lo + s1 - s0), whose rows are contiguous.
    const int64_t t_lo = reverse ? T - s1 : s0;
    gru_float::input_projection(cell, w.data(), k, (s1 - s0) * B, in + t_lo * B * C, wx.data());
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t t = reverse ? T - 1 - s : s;
      const float* x_t = in + t * B * C;
      const float* wx_t = wx.data() + (t - t_lo) * B * H3;
      running.clear();
      for (int64_t b = 0; b < B; ++b)
        if (t < lengths[static_cast<std::size_t>(b)]) running.push_back(b);
      if (running.empty()) continue;
      site.t = t;
      const auto rows = static_cast<int64_t>(running.size());
      if (rows == B) {
        gru_float::recurrent_step(cell, r.data(), k, B, x_t, wx_t, h, scratch, site);
        for (int64_t b = 0; b < B; ++b) std::copy_n(h + b * H, H, out + out_layout.offset(t, b) + out_col);
        continue;
      }
      // Some items have ended: gather the running ones' rows, step them, scatter back.
      if (tapped) xs.resize(static_cast<std::size_t>(rows * C));
      wxs.resize(static_cast<std::size_t>(rows * H3));
      hs.resize(static_cast<std::size_t>(rows * H));
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t b = running[static_cast<std::size_t>(i)];
        if (tapped) std::copy_n(x_t + b * C, C, xs.data() + i * C);
        std::copy_n(wx_t + b * H3, H3, wxs.data() + i * H3);
        std::copy_n(h + b * H, H, hs.data() + i * H);
      }
      gru_float::recurrent_step(cell, r.data(), k, rows, xs.data(), wxs.data(), hs.data(), scratch, site);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t b = running[static_cast<std::size_t>(i)];
        std::copy_n(hs.data() + i * H, H, h + b * H);
        std::copy_n(hs.data() + i * H, H, out + out_layout.offset(t, b) + out_col);
      }
    }
  }
}

}  // namespace

GruOutput gru_forward(const GruModel& model, const float* x, const Shape& x_shape, const GruRunOptions& opt) {
  model.validate();
  // A large batch as slices on several threads, each slice a forward of its own.
  GruOutput sliced;
  const gru_detail::ForwardDims dims{model.num_layers * model.directions(), model.hidden_size,
                                     model.directions() * model.hidden_size};
  auto slice = [&model](const float* xs, const Shape& s, const GruRunOptions& o, GruOutput& r) {
    r = gru_forward(model, xs, s, o);
  };
  if (gru_detail::forward_in_slices(x, x_shape, opt, dims, sliced, slice)) return sliced;
  if (x_shape.size() != 3 || x_shape[2] != model.input_size)
    fail("gru_forward: x has shape ", shape_str(x_shape), ", expected ",
         opt.batch_first ? "[B, T, C]" : "[T, B, C]", " with C = input_size = ", model.input_size);
  if (numel(x_shape) > 0 && !x) fail("gru_forward: x is null");
  gru_float::require_finite("gru_forward", "x", x, x_shape);
  const int64_t T = opt.batch_first ? x_shape[1] : x_shape[0];
  const int64_t B = opt.batch_first ? x_shape[0] : x_shape[1];
  const int64_t C = model.input_size, H = model.hidden_size, D = model.directions(), L = model.num_layers;

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
  if (T == 0 || B == 0) return out;

  const gru_float::ActiveKernels kernels = gru_float::active_kernels();
  // Every layer reads a time-major [T, B, width] input: a batch-first x is reordered once.
  std::vector<float> below, above;
  const float* in = x;
  if (opt.batch_first) {
    below.resize(static_cast<std::size_t>(T * B * C));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b) std::copy_n(x + (b * T + t) * C, C, below.data() + (t * B + b) * C);
    in = below.data();
  }
  for (int layer = 0; layer < L; ++layer) {
    const bool top = layer == L - 1;
    const SeqLayout out_layout{T, B, D * H, top && opt.batch_first};
    if (!top) above.assign(out.y.size(), 0.0f);
    float* layer_out = top ? out.y.data() : above.data();
    for (int d = 0; d < D; ++d)
      run_direction(model.cell(layer, d), kernels, in, T, B, layer_out, out_layout, d * H, lengths, d == 1,
                    out.h_n.data() + (layer * D + d) * B * H, {opt.tap, layer, d, 0});
    below.swap(above);
    in = below.data();
  }
  return out;
}

}  // namespace fixq
