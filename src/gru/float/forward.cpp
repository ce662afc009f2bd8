// gru_forward: the float GRU over whole sequences, layer by layer and direction by
// direction. Each direction projects its inputs for a block of steps at once (one matmul
// of many rows, W read once per block), then runs the steps, each for the batch items
// still running (see fixq/gru.h).
#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cpu/cache.h"
#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/batch_split.h"
#include "gru/float/inputs.h"
#include "gru/float/step.h"
#include "gru/float/step_reset_before.h"
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
void run_direction(GruCellKind kind, const GruCell& cell, const gru_float::PackedCell& packed,
                   const gru_float::ActiveKernels& k, const float* in, int64_t T, int64_t B,
                   float* out, const SeqLayout& out_layout, int64_t out_col, const std::vector<int64_t>& lengths,
                   bool reverse, float* h, gru_float::TapSite site) {
  const int64_t C = cell.input_size, H = cell.hidden_size, H3 = 3 * H;
  const int64_t block_steps = std::clamp<int64_t>(kProjectionRows / B, 1, std::max<int64_t>(T, 1));
  // R's panels in alternating order from step to step where R outgrows L2 (MatmulFn): each
  // step then starts on what the last one read last. Within L2 the order stays.
  const bool alternate = !cpu::stays_in_l2(gru_float::packed_size(H3, H) * static_cast<int64_t>(sizeof(float)));
  std::vector<float> wx(static_cast<std::size_t>(std::min(block_steps, T) * B * H3));
  std::vector<int64_t> running;
  std::vector<float> xs, wxs, hs;
  gru_float::StepScratch scratch;
  const bool tapped = site.active();
  // One step of the cell's kind over `rows` rows.
  auto step = [&](int64_t rows, const float* x_rows, const float* wx_rows, float* h_rows, bool reverse_columns) {
    if (kind == GruCellKind::ResetBefore)
      gru_float::reset_before_step(cell, packed.r, k, rows, x_rows, wx_rows, h_rows, scratch, site, reverse_columns);
    else gru_float::recurrent_step(cell, packed.r, k, rows, x_rows, wx_rows, h_rows, scratch, site, reverse_columns);
  };
  for (int64_t s0 = 0; s0 < T; s0 += block_steps) {
    const int64_t s1 = std::min(T, s0 + block_steps);
    // The block's steps are the times [t_lo, t_lo + s1 - s0), whose rows are contiguous.
    const int64_t t_lo = reverse ? T - s1 : s0;
    gru_float::input_projection(cell, packed.w, k, (s1 - s0) * B, in + t_lo * B * C, wx.data());
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
        step(B, x_t, wx_t, h, alternate && (s & 1) != 0);
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
      step(rows, xs.data(), wxs.data(), hs.data(), alternate && (s & 1) != 0);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t b = running[static_cast<std::size_t>(i)];
        std::copy_n(hs.data() + i * H, H, h + b * H);
        std::copy_n(hs.data() + i * H, H, out + out_layout.offset(t, b) + out_col);
      }
    }
  }
}

// The forward of a validated model whose cells' weights `packed` holds in the layout of
// `kernels`: gru_forward's contract, the results into out.
// `who` names the call in error messages.
void forward_packed(const char* who, const GruModel& model, const gru_float::ActiveKernels& kernels,
                    std::span<const gru_float::PackedCell> packed, const float* x, const Shape& x_shape,
                    const GruRunOptions& opt, GruOutput& out) {
  // A large batch as slices on several threads, each slice a forward of its own over the
  // same packed weights.
  const gru_detail::ForwardDims dims{model.num_layers * model.directions(), model.hidden_size,
                                     model.directions() * model.hidden_size};
  auto slice = [&](const float* xs, const Shape& s, const GruRunOptions& o, GruOutput& r) {
    forward_packed(who, model, kernels, packed, xs, s, o, r);
  };
  if (gru_detail::forward_in_slices(x, x_shape, opt, dims, out, slice)) return;
  if (x_shape.size() != 3 || x_shape[2] != model.input_size)
    fail(who, ": x has shape ", shape_str(x_shape), ", expected ",
         opt.batch_first ? "[B, T, C]" : "[T, B, C]", " with C = input_size = ", model.input_size);
  if (numel(x_shape) > 0 && !x) fail(who, ": x is null");
  gru_float::require_finite(who, "x", x, x_shape);
  const int64_t T = opt.batch_first ? x_shape[1] : x_shape[0];
  const int64_t B = opt.batch_first ? x_shape[0] : x_shape[1];
  const int64_t C = model.input_size, H = model.hidden_size, D = model.directions(), L = model.num_layers;

  std::vector<int64_t> lengths(static_cast<std::size_t>(B), T);
  if (!opt.lengths.empty()) {
    if (static_cast<int64_t>(opt.lengths.size()) != B)
      fail(who, ": ", opt.lengths.size(), " lengths given for a batch of ", B);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = opt.lengths[static_cast<std::size_t>(b)];
      if (len < 0 || len > T)
        fail(who, ": lengths[", b, "] = ", len, " is outside [0, T] = [0, ", T, "]");
      lengths[static_cast<std::size_t>(b)] = len;
    }
  }

  const Shape state_shape{L * D, B, H};
  if (opt.h0) {
    gru_float::require_finite(who, "h0", opt.h0, state_shape);
    out.h_n.assign(opt.h0, opt.h0 + numel(state_shape));
  } else {
    out.h_n.assign(static_cast<std::size_t>(numel(state_shape)), 0.0f);
  }
  // Padding is 0. Without lengths every element is written below, so kept storage
  // (FloatGru::forward into out) is only resized, not cleared first.
  const auto ny = static_cast<std::size_t>(numel(Shape{T, B, D * H}));
  if (opt.lengths.empty()) out.y.resize(ny);
  else out.y.assign(ny, 0.0f);
  if (T == 0 || B == 0) return;

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
      run_direction(model.cell_kind, model.cell(layer, d), packed[static_cast<std::size_t>(layer * D + d)], kernels, in, T, B,
                    layer_out, out_layout, d * H, lengths, d == 1, out.h_n.data() + (layer * D + d) * B * H,
                    {opt.tap, layer, d, 0});
    below.swap(above);
    in = below.data();
  }
}

}  // namespace

GruOutput gru_forward(const GruModel& model, const float* x, const Shape& x_shape, const GruRunOptions& opt) {
  model.validate();
  // Packed into this thread's reused storage (gru/float/weights.h), once for every slice.
  const gru_float::ActiveKernels kernels = gru_float::active_kernels();
  std::vector<std::unique_ptr<gru_float::PackedWeights>> views;
  std::vector<gru_float::PackedCell> packed;
  for (const GruCell& cell : model.cells) {
    const int64_t H3 = 3 * cell.hidden_size;
    views.push_back(std::make_unique<gru_float::PackedWeights>(kernels.pack, cell.W, H3, cell.input_size));
    views.push_back(std::make_unique<gru_float::PackedWeights>(kernels.pack, cell.R, H3, cell.hidden_size));
    packed.push_back({views[views.size() - 2]->data(), views.back()->data()});
  }
  GruOutput out;
  forward_packed("gru_forward", model, kernels, packed, x, x_shape, opt, out);
  return out;
}

namespace {
GruModel validated(GruModel m) {
  m.validate();
  return m;
}
}  // namespace

struct FloatGru::Impl {
  GruModel model;
  gru_float::PackedModel packed;  // of the model validated before
  explicit Impl(GruModel m) : model(validated(std::move(m))), packed(model, gru_float::active_kernels()) {}
};

FloatGru::FloatGru(GruModel model) : impl_(std::make_shared<const Impl>(std::move(model))) {}

const GruModel& FloatGru::model() const { return impl_->model; }

GruOutput FloatGru::forward(const float* x, const Shape& x_shape, const GruRunOptions& opt) const {
  GruOutput out;
  forward(x, x_shape, out, opt);
  return out;
}

void FloatGru::forward(const float* x, const Shape& x_shape, GruOutput& out, const GruRunOptions& opt) const {
  forward_packed("FloatGru::forward", impl_->model, impl_->packed.kernels, impl_->packed.cells, x, x_shape, opt, out);
}

}  // namespace fixq
