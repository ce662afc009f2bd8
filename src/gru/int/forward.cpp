// QuantizedGru: construction from a float model, and the forward pass around the integer
// loop: quantize the input, run every cell (gru/int/step_intonly.cpp), rescale between layers,
// dequantize the output.
#include <cmath>
#include <cstring>

#include "cpu/cache.h"
#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "gemm/driver.h"
#include "gru/batch_split.h"
#include "gru/int/fast/loop.h"
#include "gru/int/intonly_io.h"
#include "gru/int/model.h"
#include "quant/kernels.h"

namespace fixq {

namespace {

using gru_detail::CellPlan;

std::vector<int32_t> quantize_weights(const std::vector<float>& w, int64_t rows, const QuantParams& p) {
  std::vector<int32_t> q(w.size());
  quantize(w.data(), Shape{rows, static_cast<int64_t>(w.size()) / rows}, p, q.data());
  return q;
}

// An s8 / s16 buffer's i-th integer, widened, and the store back: intonly_io.h's.
int32_t load_q(const std::vector<char>& v, IntType t, int64_t i) { return gru_detail::intonly::load(v.data(), t, i); }
void store(std::vector<char>& v, IntType t, int64_t i, int32_t x) { gru_detail::intonly::store(v.data(), t, i, x); }

// A float tensor quantized with per-tensor parameters into s8 / s16 storage, in q.
void quantize_to(const float* x, int64_t n, const QuantParams& p, IntType storage, std::vector<char>& q) {
  q.resize(static_cast<size_t>(n) * static_cast<size_t>(int_type_bytes(storage)));
  if (storage == IntType::S16) {
    quantize(x, Shape{n}, p, reinterpret_cast<int16_t*>(q.data()));
  } else {
    quantize(x, Shape{n}, p, reinterpret_cast<int8_t*>(q.data()));
  }
}

std::vector<char> quantize_to(const float* x, int64_t n, const QuantParams& p, IntType storage) {
  std::vector<char> q;
  quantize_to(x, n, p, storage, q);
  return q;
}

// This thread's forward buffers (gru/int/model.h LayerBuffers): they keep their capacity, so a
// loop of forwards of one shape allocates nothing after its first call.
LayerBuffers& thread_buffers() {
  thread_local LayerBuffers buf;
  return buf;
}

// Every element of q (s8 or s16 storage) set to the integer v: the fill loops run once per
// forward over T x B x H elements, so they are written per type (vectorisable).
void fill_q(std::vector<char>& q, IntType t, int64_t n, int32_t v) {
  q.resize(static_cast<size_t>(n) * static_cast<size_t>(int_type_bytes(t)));
  if (t == IntType::S16) {
    const auto s = static_cast<int16_t>(v);
    for (int64_t i = 0; i < n; ++i) std::memcpy(q.data() + 2 * i, &s, 2);
  } else {
    std::memset(q.data(), static_cast<unsigned char>(static_cast<int8_t>(v)), static_cast<size_t>(n));
  }
}

// dst[j] = dequantize_value(q[src + j]) for j < n, per storage type, on the quantize
// kernels the active features select (quant/kernels.h: the same float32 formula on every
// path), looked up once per call of forward or step. Every stored value lies in its storage
// type, the range the kernels check.
struct StateDequantizer {
  decltype(quant_detail::QuantKernels<int8_t>::dequantize) s8 =
      quant_detail::active_kernel(&quant_detail::QuantKernels<int8_t>::dequantize);
  decltype(quant_detail::QuantKernels<int16_t>::dequantize) s16 =
      quant_detail::active_kernel(&quant_detail::QuantKernels<int16_t>::dequantize);

  void row(const std::vector<char>& q, IntType t, int64_t src, int64_t n, float scale, int32_t zp, float* dst) const {
    const IntRange r = int_type_range(t);
    const int64_t bad = t == IntType::S16
                            ? s16(reinterpret_cast<const int16_t*>(q.data()) + src, n, scale, zp, r.qmin, r.qmax, dst)
                            : s8(reinterpret_cast<const int8_t*>(q.data()) + src, n, scale, zp, r.qmin, r.qmax, dst);
    if (bad >= 0) fail("internal: GRU state element ", src + bad, " is outside its storage type");
  }
};

std::vector<float> time_major(const float* x, int64_t T, int64_t B, int64_t C) {
  std::vector<float> out(static_cast<size_t>(T * B * C));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) std::memcpy(&out[static_cast<size_t>((t * B + b) * C)], x + (b * T + t) * C, sizeof(float) * C);
  return out;
}

}  // namespace

QuantizedGru::QuantizedGru(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
QuantizedGru::~QuantizedGru() = default;
QuantizedGru::QuantizedGru(QuantizedGru&&) noexcept = default;
QuantizedGru& QuantizedGru::operator=(QuantizedGru&&) noexcept = default;

QuantizedGru::QuantizedGru(const GruModel& model, const GruQuantParams& params) {
  model.validate();
  params.config.validate();
  require(params.cells.size() == model.cells.size(), "GRU parameters describe ", params.cells.size(),
          " cells but the model has ", model.cells.size());
  // Both directions of a layer read the same quantized input, in the forward cell's x
  // parameters (run_layers), so their x parameters must agree.
  if (model.bidirectional)
    for (size_t c = 0; c + 1 < params.cells.size(); c += 2) {
      const QuantParams &a = params.cells[c][GruOp::X], &b = params.cells[c + 1][GruOp::X];
      require(a.scale == b.scale && a.zero_point == b.zero_point, "GRU parameters: the two directions of layer ",
              c / 2, " quantize their shared input x differently (scale ", a.scale[0], " vs ", b.scale[0],
              "); both must use the same x parameters");
    }
  impl_ = std::make_unique<Impl>();
  impl_->params = params;
  impl_->input_size = model.input_size;
  impl_->hidden_size = model.hidden_size;
  impl_->num_layers = static_cast<int>(model.num_layers);
  impl_->bidirectional = model.bidirectional;
  impl_->cell_kind = model.cell_kind;
  const int64_t H3 = 3 * model.hidden_size;
  for (size_t c = 0; c < model.cells.size(); ++c) {
    const GruCell& cell = model.cells[c];
    const GruCellParams& p = params.cells[c];
    impl_->plans.push_back(gru_detail::build_plan(
        p, params.config, cell.input_size, cell.hidden_size, quantize_weights(cell.W, H3, p[GruOp::W]),
        quantize_weights(cell.R, H3, p[GruOp::R]), quantize_weights(cell.bx, H3, p[GruOp::Bx]),
        quantize_weights(cell.br, H3, p[GruOp::Br]), nullptr, model.cell_kind));
  }
  impl_->finish();
}

void QuantizedGru::Impl::finish() {
  if (bidirectional)
    for (size_t c = 0; c + 1 < plans.size(); c += 2) gru_detail::pair_directions(plans[c], plans[c + 1]);
  const size_t below_top = static_cast<size_t>((num_layers - 1) * directions());
  next_input_of_h.assign(plans.size(), {});
  for (size_t c = 0; c < below_top; ++c) {
    if (plans[c].h.storage != IntType::S8) continue;
    const Rescale rs = layer_rescale(c);
    std::vector<int32_t>& table = next_input_of_h[c];
    for (int32_t q = -128; q <= 127; ++q) table.push_back(rs(q));
  }
}

Rescale QuantizedGru::Impl::layer_rescale(size_t c) const {
  const size_t next = (c / static_cast<size_t>(directions()) + 1) * static_cast<size_t>(directions());
  const QuantParams& hp = params.cells[c][GruOp::H];
  const QuantParams& nx = params.cells[next][GruOp::X];
  return Rescale::make(hp.scale[0], hp.zero_point[0], nx.scale[0], nx.zero_point[0], plans[next].x.range,
                       params.config.scale_kind);
}

const GruQuantParams& QuantizedGru::params() const { return impl_->params; }
int64_t QuantizedGru::input_size() const { return impl_->input_size; }
int64_t QuantizedGru::hidden_size() const { return impl_->hidden_size; }
int QuantizedGru::num_layers() const { return impl_->num_layers; }
bool QuantizedGru::bidirectional() const { return impl_->bidirectional; }
GruCellKind QuantizedGru::cell_kind() const { return impl_->cell_kind; }

std::vector<bool> QuantizedGru::vectorized_cells() const {
  std::vector<bool> v;
  for (const CellPlan& p : impl_->plans) v.push_back(p.fast != nullptr && gru_detail::active_lane_kernels() != nullptr);
  return v;
}

void QuantizedGru::Impl::quantize_input(const float* x, int64_t n, std::vector<char>& q, const char* what) const {
  // One pass over x: its quantization also finds the first value that is not finite (x is
  // read from memory once; a separate check took ~2% of a batch-16 forward).
  const QuantParams& p = params.cells[0][GruOp::X];
  const IntType storage = plans[0].x.storage;
  const int32_t qmin = p.scheme.format.qmin(), qmax = p.scheme.format.qmax();
  q.resize(static_cast<size_t>(n) * static_cast<size_t>(int_type_bytes(storage)));
  const int64_t bad =
      storage == IntType::S16
          ? quant_detail::active_kernel(&quant_detail::QuantKernels<int16_t>::quantize_finite)(
                x, n, p.scale[0], p.zero_point[0], qmin, qmax, reinterpret_cast<int16_t*>(q.data()))
          : quant_detail::active_kernel(&quant_detail::QuantKernels<int8_t>::quantize_finite)(
                x, n, p.scale[0], p.zero_point[0], qmin, qmax, reinterpret_cast<int8_t*>(q.data()));
  if (bad >= 0) fail(what, " element ", bad, " is ", x[bad], ": inputs must be finite");
}

float QuantizedGru::Impl::dequantize_h(size_t c, const std::vector<char>& q, int64_t i) const {
  const QuantParams& hp = params.cells[c][GruOp::H];
  return dequantize_value(load_q(q, plans[c].h.storage, i), hp.scale[0], hp.zero_point[0]);
}

std::vector<std::vector<char>> QuantizedGru::Impl::initial_state(const float* h0, int64_t B) const {
  const int64_t H = hidden_size;
  std::vector<std::vector<char>> state;
  for (size_t c = 0; c < plans.size(); ++c) {
    const CellPlan& plan = plans[c];
    if (h0 != nullptr) {
      const float* h = h0 + static_cast<int64_t>(c) * B * H;
      for (int64_t i = 0; i < B * H; ++i)
        if (!std::isfinite(h[i])) fail("GRU h0 element ", static_cast<int64_t>(c) * B * H + i, " is not finite");
      state.push_back(quantize_to(h, B * H, params.cells[c][GruOp::H], plan.h.storage));
    } else {
      std::vector<char> q;
      fill_q(q, plan.h.storage, B * H, plan.h.zp);  // real 0
      state.push_back(std::move(q));
    }
  }
  return state;
}

bool QuantizedGru::Impl::pipelines(const Shape& x_shape, const GruRunOptions& opt) const {
  if (x_shape.size() != 3 || directions() != 1 || plans.empty() || !plans[0].fast) return false;
  const int64_t B = opt.batch_first ? x_shape[0] : x_shape[1];
  if (B < kGruMinThreadedBatch) return false;
  const int n = gru_detail::forward_threads(opt, B);
  const int64_t tile = gemm_detail::rows_per_tile(plans[0].h.storage, plans[0].r.type(), B);
  // Where R comes from L3 the recurrence alone is bound by that stream, and two slices read
  // it at twice the rate (AMX, int8, batch 16, two threads against one: H = 1024 slices
  // 1.60-1.62x, the pipeline 1.42-1.57x; H = 512, R in L2: 1.46-1.49x against 1.56-1.62x).
  const int64_t r_bytes = 3 * hidden_size * hidden_size * int_type_bytes(plans[0].r.type());
  return n >= 2 && B >= tile && B / n < tile && cpu::stays_in_l2(r_bytes);
}

void QuantizedGru::Impl::run_layers(LayerBuffers& buf, int64_t T, int64_t B, const std::vector<int64_t>& lengths,
                                    std::vector<std::vector<char>>& state, bool pipelined) const {
  const int64_t H = hidden_size;
  const int D = directions();
  auto real_step = [&](int64_t t, int64_t b) { return lengths.empty() || t < lengths[static_cast<size_t>(b)]; };
  std::vector<std::vector<char>>& out = buf.out;
  out.resize(static_cast<size_t>(D));
  // The two directions of a layer are independent: with two GEMM threads allowed and
  // enough work, the reverse one runs on a second thread (same integers either way).
  const bool two_threads = D == 2 && gemm_threads() >= 2 && T * B * H * (H + input_size) >= (int64_t{1} << 22);
  for (int l = 0; l < num_layers; ++l) {
    // Every real step's h is written by the loop; only padding steps need the zero point.
    auto prepare_output = [&](int d) {
      const CellPlan& plan = plans[static_cast<size_t>(l * D + d)];
      std::vector<char>& o = out[static_cast<size_t>(d)];
      if (lengths.empty()) o.resize(static_cast<size_t>(T * B * H) * static_cast<size_t>(int_type_bytes(plan.h.storage)));
      else fill_q(o, plan.h.storage, T * B * H, plan.h.zp);
    };
    if (D == 2) {
      prepare_output(0);
      prepare_output(1);
      const size_t c = static_cast<size_t>(l * D);
      gru_detail::run_layer_pair(plans[c], plans[c + 1], buf.in.data(), T, B, lengths, state[c].data(), out[0].data(),
                                 state[c + 1].data(), out[1].data(), two_threads);
    } else {
      prepare_output(0);
      gru_detail::run_cell(plans[static_cast<size_t>(l)], buf.in.data(), T, B, lengths, false,
                           state[static_cast<size_t>(l)].data(), out[0].data(), pipelined);
    }
    if (l + 1 == num_layers) break;
    // The next layer's input: each direction's h rescaled into that layer's x parameters.
    const size_t next = static_cast<size_t>((l + 1) * D);
    const CellPlan& np = plans[next];
    const QuantParams& nx = params.cells[next][GruOp::X];
    std::vector<char>& in = buf.next;
    in.resize(static_cast<size_t>(T * B * D * H) * static_cast<size_t>(int_type_bytes(np.x.storage)));
    for (int d = 0; d < D; ++d) {
      const size_t c = static_cast<size_t>(l * D + d);
      const std::vector<char>& h = out[static_cast<size_t>(d)];
      const std::vector<int32_t>& table = next_input_of_h[c];
      if (!table.empty()) {
        // 8-bit h: one table read per element, in typed row loops.
        for (int64_t r = 0; r < T * B; ++r) {
          const auto* src = reinterpret_cast<const int8_t*>(h.data()) + r * H;
          const int64_t dst = r * D * H + d * H;
          // Padding steps carry real 0 into the next layer, whose loop skips them anyway.
          const bool real = real_step(r / B, r % B);
          if (np.x.storage == IntType::S8) {
            auto* o = reinterpret_cast<int8_t*>(in.data()) + dst;
            for (int64_t j = 0; j < H; ++j)
              o[j] = static_cast<int8_t>(real ? table[static_cast<size_t>(src[j] + 128)] : nx.zero_point[0]);
          } else {
            for (int64_t j = 0; j < H; ++j) store(in, np.x.storage, dst + j, real ? table[static_cast<size_t>(src[j] + 128)] : nx.zero_point[0]);
          }
        }
        continue;
      }
      const Rescale rs = layer_rescale(c);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j) {
            const int64_t src = (t * B + b) * H + j, dst = (t * B + b) * D * H + d * H + j;
            store(in, np.x.storage, dst, real_step(t, b) ? rs(load_q(h, plans[c].h.storage, src)) : nx.zero_point[0]);
          }
    }
    std::swap(buf.in, buf.next);
  }
}

GruOutput QuantizedGru::forward(const float* x, const Shape& x_shape, const GruRunOptions& opt) const {
  GruOutput out;
  forward(x, x_shape, out, opt);
  return out;
}

void QuantizedGru::forward(const float* x, const Shape& x_shape, GruOutput& out, const GruRunOptions& opt) const {
  const Impl& m = *impl_;
  // A large batch as slices on several threads, each slice a forward of its own.
  const gru_detail::ForwardDims dims{m.num_layers * m.directions(), m.hidden_size, m.directions() * m.hidden_size};
  auto slice = [this](const float* xs, const Shape& s, const GruRunOptions& o, GruOutput& r) { forward(xs, s, r, o); };
  const bool pipelined = m.pipelines(x_shape, opt);
  if (!pipelined && gru_detail::forward_in_slices(x, x_shape, opt, dims, out, slice)) return;
  require(x_shape.size() == 3, "GRU input must be 3-D [T, B, C] (or [B, T, C] with batch_first), got ", shape_str(x_shape));
  const int64_t T = opt.batch_first ? x_shape[1] : x_shape[0], B = opt.batch_first ? x_shape[0] : x_shape[1];
  const int64_t C = x_shape[2], H = m.hidden_size;
  const int D = m.directions();
  require(C == m.input_size, "GRU input has ", C, " features per step; the model expects ", m.input_size);
  require(x != nullptr || T * B == 0, "GRU input: null data pointer");
  std::vector<int64_t> lengths(opt.lengths.begin(), opt.lengths.end());
  require(lengths.empty() || static_cast<int64_t>(lengths.size()) == B, "GRU lengths: ", lengths.size(),
          " entries for a batch of ", B);
  for (int64_t len : lengths) require(len >= 0 && len <= T, "GRU lengths: ", len, " is outside [0, ", T, "]");
  std::vector<float> xt;
  if (opt.batch_first) {
    xt = time_major(x, T, B, C);
    x = xt.data();
  }
  const int64_t n = T * B * C;

  std::vector<std::vector<char>> state = m.initial_state(opt.h0, B);
  LayerBuffers& buf = thread_buffers();
  m.quantize_input(x, n, buf.in, "GRU input");
  m.run_layers(buf, T, B, lengths, state, pipelined);
  const StateDequantizer deq;
  out.h_n.resize(static_cast<size_t>(m.num_layers * D * B * H));
  for (size_t c = 0; c < state.size(); ++c) {
    const QuantParams& hp = m.params.cells[c][GruOp::H];
    deq.row(state[c], m.plans[c].h.storage, 0, B * H, hp.scale[0], hp.zero_point[0],
            out.h_n.data() + c * static_cast<size_t>(B * H));
  }
  // Dequantize the top layer's output; padding is 0. Without lengths every element is
  // written below, so out.y is only resized (kept storage is not cleared first).
  const auto ny = static_cast<size_t>(T * B * D * H);
  if (lengths.empty()) out.y.resize(ny);
  else out.y.assign(ny, 0.0f);
  for (int d = 0; d < D; ++d) {
    const size_t c = static_cast<size_t>((m.num_layers - 1) * D + d);
    const QuantParams& hp = m.params.cells[c][GruOp::H];
    const float scale = hp.scale[0];
    const int32_t zp = hp.zero_point[0];
    const IntType storage = m.plans[c].h.storage;
    const std::vector<char>& q = buf.out[static_cast<size_t>(d)];
    if (D == 1 && lengths.empty() && !opt.batch_first) {  // one run, in the order it is stored
      deq.row(q, storage, 0, T * B * H, scale, zp, out.y.data());
      continue;
    }
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b) {
        if (!lengths.empty() && t >= lengths[static_cast<size_t>(b)]) continue;
        float* dst = out.y.data() + (opt.batch_first ? (b * T + t) : (t * B + b)) * D * H + d * H;
        deq.row(q, storage, (t * B + b) * H, H, scale, zp, dst);
      }
  }
}

QuantizedGruStream::QuantizedGruStream(const QuantizedGru& model, int64_t batch, const float* h0)
    : model_(&model), batch_(batch) {
  require(!model.bidirectional(), "QuantizedGruStream: a bidirectional GRU needs the whole sequence; use forward()");
  require(batch >= 1, "QuantizedGruStream: batch must be >= 1, got ", batch);
  q_h_ = model.impl_->initial_state(h0, batch);
}

std::vector<float> QuantizedGruStream::step(const float* x) {
  std::vector<float> h(static_cast<size_t>(batch_ * model_->hidden_size()));
  step(x, h.data());
  return h;
}

void QuantizedGruStream::step(const float* x, float* h_out) {
  const QuantizedGru::Impl& m = *model_->impl_;
  const int64_t n = batch_ * m.input_size;
  require(x != nullptr, "QuantizedGruStream::step: null frame");
  require(h_out != nullptr, "QuantizedGruStream::step: null output");
  LayerBuffers& buf = thread_buffers();
  m.quantize_input(x, n, buf.in, "QuantizedGruStream::step: frame");
  m.run_layers(buf, 1, batch_, {}, q_h_);
  const size_t top = q_h_.size() - 1;
  const QuantParams& hp = m.params.cells[top][GruOp::H];
  StateDequantizer{}.row(buf.out[0], m.plans[top].h.storage, 0, batch_ * m.hidden_size, hp.scale[0],
                         hp.zero_point[0], h_out);
}

std::vector<float> QuantizedGruStream::state() const {
  const QuantizedGru::Impl& m = *model_->impl_;
  std::vector<float> s;
  for (size_t c = 0; c < q_h_.size(); ++c)
    for (int64_t i = 0; i < batch_ * m.hidden_size; ++i) s.push_back(m.dequantize_h(c, q_h_[c], i));
  return s;
}

}  // namespace fixq
