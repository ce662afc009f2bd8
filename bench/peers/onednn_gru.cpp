// oneDNN's GRUs for `fixq bench gru`: lbr_gru f32 (the same function as fixq's GRU) and
// the vanilla gru in f32 and u8s8 (oneDNN 2.6 has no int8 lbr_gru). Primitives are
// created and weights reordered to the primitive's preferred layout once, here, so a
// timed run() is primitive execution only. The u8s8 gru also runs one frame per call (T = 1),
// its state carried from call to call, as a streaming app would call it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <utility>

#include "fixq/arith.h"
#include "fixq/error.h"
#include "peers/onednn.h"

namespace fixq::peers {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// rnn_data_qparams: u8 = round(127 x + 128), one map for x, h and the output, so that
// [-1, 1] (the range of h and of the benchmark's inputs) fills [1, 255].
constexpr float kDataScale = 127.0f;
constexpr float kDataShift = 128.0f;
// rnn_weights_qparams mask: one scale per (gate, output channel) of ldigo weights.
constexpr int kPerGateOutputMask = (1 << 3) | (1 << 4);

// fixq's [3H, K] (rows: gates z, r, g, each H outputs) to oneDNN's ldigo [1, 1, K, 3, H]
// (gates u, r, o: the same three in the same order).
std::vector<float> to_ldigo(const std::vector<float>& w, int64_t k_size, int64_t h) {
  std::vector<float> out(w.size());
  for (int64_t k = 0; k < k_size; ++k)
    for (int64_t row = 0; row < 3 * h; ++row)
      out[static_cast<size_t>(k * 3 * h + row)] = w[static_cast<size_t>(row * k_size + k)];
  return out;
}

// Symmetric scale per (gate, output), shared by W and R as oneDNN requires, mapping the
// largest |weight| of that output row in either matrix to 63: 7-bit weights, because
// without VNNI oneDNN multiplies u8 x s8 with vpmaddubsw, whose pair sums saturate at
// int16 (its documented int8 caveat); 2 * 255 * 63 < 2^15 cannot. Measured on AVX2: full
// 127 gives cosine 0.975 to the f32 gru, 63 gives 0.9998, at the same speed.
constexpr float kWeightMax = 63.0f;
std::vector<float> weight_scales(const GruCell& c) {
  const int64_t rows = 3 * c.hidden_size;
  std::vector<float> scales(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    float m = 0.0f;
    for (int64_t k = 0; k < c.input_size; ++k)
      m = std::max(m, std::fabs(c.W[static_cast<size_t>(r * c.input_size + k)]));
    for (int64_t k = 0; k < c.hidden_size; ++k)
      m = std::max(m, std::fabs(c.R[static_cast<size_t>(r * c.hidden_size + k)]));
    scales[static_cast<size_t>(r)] = m > 0.0f ? kWeightMax / m : 1.0f;
  }
  return scales;
}

// lbr_gru has four bias gates (u, r, o on the input side, u' = the recurrent o bias inside
// r * (R h + u')): exactly fixq's split. The vanilla gru has one bias per gate.
std::vector<float> bias_ldgo(const GruCell& c, bool linear_before_reset) {
  const size_t h = static_cast<size_t>(c.hidden_size);
  std::vector<float> b((linear_before_reset ? 4 : 3) * h);
  for (size_t i = 0; i < 3 * h; ++i) b[i] = c.bx[i] + c.br[i];
  if (linear_before_reset) {
    for (size_t i = 0; i < h; ++i) {
      b[2 * h + i] = c.bx[2 * h + i];
      b[3 * h + i] = c.br[2 * h + i];
    }
  }
  return b;
}

const char* kind_name(OnednnGru::Kind kind) {
  switch (kind) {
    case OnednnGru::Kind::LbrF32:
      return "lbr_gru f32";
    case OnednnGru::Kind::VanillaF32:
      return "gru f32";
    case OnednnGru::Kind::VanillaU8S8:
      return "gru u8s8";
  }
  return "?";
}

}  // namespace

struct OnednnGru::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::string impl_info;
  size_t dst_elems = 0;
  // One frame per call: the frames' and their outputs' memories over frame_bytes (u8 or
  // f32 frames) and dst_all, and the next frame's index.
  std::vector<memory> src_frames, dst_frames;
  std::vector<unsigned char> frame_bytes;
  std::vector<float> dst_all;
  size_t next_frame = 0;

  // A memory of `md` holding `data` (already in md's plain layout).
  memory filled(const memory::desc& md, const void* data, size_t bytes) {
    memory m(md, engine);
    std::memcpy(m.get_data_handle(), data, bytes);
    return m;
  }
  // User weights (ldigo f32) reordered, and quantized under attr for s8, into `want`.
  memory weights(const memory::desc& want, const std::vector<float>& ldigo, const memory::dims& dims,
                 const dnnl::primitive_attr& attr) {
    memory user = filled(memory::desc(dims, dt::f32, tag::ldigo), ldigo.data(), ldigo.size() * sizeof(float));
    memory packed(want, engine);
    dnnl::reorder(dnnl::reorder::primitive_desc(user, packed, attr)).execute(stream, user, packed);
    stream.wait();
    return packed;
  }
};

OnednnGru::OnednnGru(Kind kind, const GruModel& model, const std::vector<float>& x, int64_t steps, int64_t batch,
                     bool one_frame_per_call)
    : impl_(std::make_unique<Impl>()) {
  require(model.num_layers == 1 && !model.bidirectional && model.cells.size() == 1,
          "bench gru: the oneDNN comparison takes one unidirectional layer");
  const GruCell& c = model.cells[0];
  const int64_t C = model.input_size, H = model.hidden_size, T = steps, B = batch;
  require(static_cast<int64_t>(x.size()) == T * B * C, "bench gru: x must hold T * B * C floats");
  const bool int8 = kind == Kind::VanillaU8S8;
  const bool lbr = kind == Kind::LbrF32;
  require(!one_frame_per_call || int8 || lbr,
          "bench gru: one frame per call is set up for oneDNN's gru u8s8 and lbr_gru f32 only");
  const int64_t T_call = one_frame_per_call ? 1 : T;  // the primitive's steps per call
  Impl& m = *impl_;
  try {
    dnnl::primitive_attr attr;
    if (int8) {
      attr.set_rnn_data_qparams(kDataScale, kDataShift);
      attr.set_rnn_weights_qparams(kPerGateOutputMask, weight_scales(c));
    }
    const memory::dims wl_dims{1, 1, C, 3, H}, wi_dims{1, 1, H, 3, H};
    const memory::desc src_md({T_call, B, C}, int8 ? dt::u8 : dt::f32, tag::tnc);
    // int8: h0 = 0 is passed explicitly as the quantized zero (the shift), so that no
    // convention of an absent src_iter is relied on; f32: absent means zeros, but for one
    // frame per call, whose state goes from call to call.
    const memory::desc src_iter_md = int8 || one_frame_per_call
                                         ? memory::desc({1, 1, B, H}, int8 ? dt::u8 : dt::f32, tag::ldnc)
                                         : memory::desc();
    const memory::desc wl_md(wl_dims, int8 ? dt::s8 : dt::f32, tag::any),
        wi_md(wi_dims, int8 ? dt::s8 : dt::f32, tag::any);
    const memory::desc bias_md({1, 1, lbr ? 4 : 3, H}, dt::f32, tag::ldgo);
    const memory::desc dst_md({T_call, B, H}, dt::f32, tag::tnc);
    // One frame per call hands the final state on (u8 for int8), as the steps of one run do.
    const memory::desc dst_iter_md = one_frame_per_call ? src_iter_md : memory::desc();
    const auto dir = dnnl::rnn_direction::unidirectional_left2right;
    const auto prop = dnnl::prop_kind::forward_inference;
    memory::desc pd_wl, pd_wi;
    if (lbr) {
      const dnnl::lbr_gru_forward::primitive_desc pd(
          dnnl::lbr_gru_forward::desc(prop, dir, src_md, src_iter_md, wl_md, wi_md, bias_md, dst_md, dst_iter_md),
          attr, m.engine);
      m.primitive = dnnl::lbr_gru_forward(pd);
      m.impl_info = pd.impl_info_str();
      pd_wl = pd.weights_layer_desc();
      pd_wi = pd.weights_iter_desc();
    } else {
      const dnnl::gru_forward::primitive_desc pd(
          dnnl::gru_forward::desc(prop, dir, src_md, src_iter_md, wl_md, wi_md, bias_md, dst_md, dst_iter_md), attr,
          m.engine);
      m.primitive = dnnl::gru_forward(pd);
      m.impl_info = pd.impl_info_str();
      pd_wl = pd.weights_layer_desc();
      pd_wi = pd.weights_iter_desc();
    }
    m.args[DNNL_ARG_WEIGHTS_LAYER] = m.weights(pd_wl, to_ldigo(c.W, C, H), wl_dims, attr);
    m.args[DNNL_ARG_WEIGHTS_ITER] = m.weights(pd_wi, to_ldigo(c.R, H, H), wi_dims, attr);
    const std::vector<float> bias = bias_ldgo(c, lbr);
    m.args[DNNL_ARG_BIAS] = m.filled(bias_md, bias.data(), bias.size() * sizeof(float));
    // The input as the primitive takes it: u8 (quantized) or f32.
    const size_t x_bytes = int8 ? 1 : sizeof(float);
    std::vector<unsigned char> src(x.size() * x_bytes);
    if (int8) {
      for (size_t i = 0; i < x.size(); ++i)
        src[i] = static_cast<uint8_t>(round_half_even_saturate(double{kDataScale * x[i] + kDataShift}, 0, 255));
      const std::vector<uint8_t> h0(static_cast<size_t>(B * H), static_cast<uint8_t>(kDataShift));
      m.args[DNNL_ARG_SRC_ITER] = m.filled(src_iter_md, h0.data(), h0.size());
    } else {
      std::memcpy(src.data(), x.data(), src.size());
      if (one_frame_per_call) {
        const std::vector<float> h0(static_cast<size_t>(B * H), 0.0f);
        m.args[DNNL_ARG_SRC_ITER] = m.filled(src_iter_md, h0.data(), h0.size() * sizeof(float));
      }
    }
    if (one_frame_per_call) {
      m.frame_bytes = std::move(src);
      m.dst_all.assign(static_cast<size_t>(T * B * H), 0.0f);
      const auto frame = static_cast<size_t>(B * C) * x_bytes;
      for (int64_t t = 0; t < T; ++t) {
        m.src_frames.emplace_back(src_md, m.engine, m.frame_bytes.data() + static_cast<size_t>(t) * frame);
        m.dst_frames.emplace_back(dst_md, m.engine, m.dst_all.data() + t * B * H);
      }
      m.args[DNNL_ARG_DST_ITER] = memory(dst_iter_md, m.engine);
    } else {
      m.args[DNNL_ARG_SRC_LAYER] = m.filled(src_md, src.data(), src.size());
    }
    if (!one_frame_per_call) m.args[DNNL_ARG_DST_LAYER] = memory(dst_md, m.engine);
    m.dst_elems = static_cast<size_t>(T * B * H);
  } catch (const dnnl::error& e) {
    fail("oneDNN ", kind_name(kind), " (T=", T, ", batch ", B, ", H=", H, "): ", e.what(), " (status ",
         static_cast<int>(e.status), ")");
  }
}

OnednnGru::~OnednnGru() = default;

void OnednnGru::run() {
  Impl& m = *impl_;
  if (m.src_frames.empty()) {
    m.primitive.execute(m.stream, m.args);
    m.stream.wait();
    return;
  }
  m.args[DNNL_ARG_SRC_LAYER] = m.src_frames[m.next_frame];
  m.args[DNNL_ARG_DST_LAYER] = m.dst_frames[m.next_frame];
  m.primitive.execute(m.stream, m.args);
  m.stream.wait();
  std::swap(m.args.at(DNNL_ARG_SRC_ITER), m.args.at(DNNL_ARG_DST_ITER));  // this frame's state feeds the next
  m.next_frame = (m.next_frame + 1) % m.src_frames.size();
}

std::vector<float> OnednnGru::output() const {
  if (!impl_->src_frames.empty()) return impl_->dst_all;
  const float* p = static_cast<const float*>(impl_->args.at(DNNL_ARG_DST_LAYER).get_data_handle());
  return std::vector<float>(p, p + impl_->dst_elems);
}

std::string OnednnGru::implementation() const { return impl_->impl_info; }

}  // namespace fixq::peers
