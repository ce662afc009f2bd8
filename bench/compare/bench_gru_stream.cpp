// `fixq bench gru`, one frame per call: the rows a real-time app sees (a 10 ms frame per
// call, batch 1, the state kept between calls), and the machine's bound for the step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "compare/bench_gru.h"
#include "fixq/cpu.h"
#include "fixq/error.h"
#if FIXQ_PEER_ONEDNN
#include "peers/onednn.h"
#endif

namespace fixq::bench::gru_bench {

const char* const kStreamImpls[kStreamImplCount] = {"fixq_int8_stream", "fixq_int8_forward_T1", "fixq_float_stream",
                                                    "onednn_gru_u8s8_stream", "onednn_lbr_gru_f32_stream"};

namespace {

// The vpdpbusd peak: samples of kPeakIterations loops of 12 instructions (~1 ms each).
constexpr int kMachineSamples = 31;
constexpr long kPeakIterations = 100'000;

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

StreamTimes time_streaming(const Models& m, const std::vector<float>& x, int64_t T, const std::vector<float>& y8,
                           const std::vector<float>& y_float, const Budget& budget) {
  const int64_t H = m.float_model.hidden_size, C = m.float_model.input_size;
  const Shape frame_shape{1, 1, C};
  // fixq's stream: T frames must give the whole-sequence forward's y, bit for bit.
  QuantizedGruStream stream(m.q8, 1);
  std::vector<float> h(static_cast<size_t>(H));  // step(x, h_out): the frame loop allocates nothing
  for (int64_t t = 0; t < T; ++t) {
    stream.step(x.data() + t * C, h.data());
    require(same_bits(h.data(), y8.data() + t * H, static_cast<size_t>(H)), "bench gru: fixq_int8_stream at H=", H,
            " differs from the whole-sequence forward at frame ", t);
  }
  // The float GRU's stream: the float forward's y, bit for bit.
  GruStream float_stream(m.float_model, 1);
  std::vector<float> hf(static_cast<size_t>(H));
  for (int64_t t = 0; t < T; ++t) {
    float_stream.step(x.data() + t * C, hf.data());
    require(same_bits(hf.data(), y_float.data() + t * H, static_cast<size_t>(H)), "bench gru: fixq_float_stream at H=",
            H, " differs from the whole-sequence float forward at frame ", t);
  }
  // forward with T = 1, each call's h0 the last call's h_n (two outputs in turn, so that
  // no call reads the state it writes).
  GruOutput outs[2];
  GruRunOptions opt;
  int64_t call = 0;
  auto forward_frame = [&](int64_t t) {
    GruOutput& out = outs[call & 1];
    opt.h0 = call == 0 ? nullptr : outs[(call + 1) & 1].h_n.data();
    m.q8.forward(x.data() + t * C, frame_shape, out, opt);
    ++call;
    return out.y.data();
  };
  for (int64_t t = 0; t < T; ++t)
    require(same_bits(forward_frame(t), y8.data() + t * H, static_cast<size_t>(H)),
            "bench gru: fixq_int8_forward_T1 at H=", H, " differs from the whole-sequence forward at frame ", t);

  int64_t next = 0;  // frames cycle; the state runs on
  std::function<void()> runs[kStreamImplCount] = {
      [&] { stream.step(x.data() + (next++ % T) * C, h.data()); },
      [&] { forward_frame(next++ % T); },
      [&] { float_stream.step(x.data() + (next++ % T) * C, hf.data()); },
      {},
      {},
  };
#if FIXQ_PEER_ONEDNN
  // oneDNN one frame per call: its T calls must compute its own T-step run.
  peers::OnednnGru whole(peers::OnednnGru::Kind::VanillaU8S8, m.float_model, x, T, 1);
  peers::OnednnGru frames(peers::OnednnGru::Kind::VanillaU8S8, m.float_model, x, T, 1, true);
  whole.run();
  for (int64_t t = 0; t < T; ++t) frames.run();
  const double diff = max_abs_diff(whole.output(), frames.output());
  std::printf("# check H=%lld one frame per call: onednn_gru_u8s8_stream vs its T-step run max|diff| %.2e; "
              "fixq_int8_stream and fixq_int8_forward_T1 equal the T-step forward, fixq_float_stream the float forward, "
              "bit for bit\n",
              static_cast<long long>(H), diff);
  require(diff < 1e-3, "bench gru: oneDNN's gru u8s8 one frame per call differs from its T-step run by ", diff,
          " at H=", H, ": the state is not carried between calls");
  runs[kOnednnU8S8Stream] = [&] { frames.run(); };
  // Its lbr_gru f32 likewise: fixq_float's function, so its frames must give fixq's float y.
  peers::OnednnGru lbr_frames(peers::OnednnGru::Kind::LbrF32, m.float_model, x, T, 1, true);
  for (int64_t t = 0; t < T; ++t) lbr_frames.run();
  const double lbr_diff = max_abs_diff(lbr_frames.output(), y_float);
  std::printf("# check H=%lld one frame per call: onednn_lbr_gru_f32_stream vs fixq_float max|diff| %.2e\n",
              static_cast<long long>(H), lbr_diff);
  require(lbr_diff < 1e-3, "bench gru: oneDNN's lbr_gru f32 one frame per call differs from fixq's float forward by ",
          lbr_diff, " at H=", H, ": the state is not carried between calls");
  runs[kOnednnLbrF32Stream] = [&] { lbr_frames.run(); };
#else
  std::printf("# check H=%lld one frame per call: fixq_int8_stream and fixq_int8_forward_T1 equal the T-step "
              "forward, fixq_float_stream the float forward, bit for bit\n",
              static_cast<long long>(H));
#endif
  StreamTimes s;
  for (int i = 0; i < kTimedStreamImpls; ++i) {
    s.timing[i] = time_calls(runs[i], budget);
    s.us[i] = s.timing[i].seconds_per_call * 1e6;
  }
  return s;
}

Machine measure_machine() {
  Machine m;
  if (!cpu_supports(Isa::Avx512)) return m;  // no vpdpbusd to measure the peak of
  m.available = true;
  m.l2 = l2_read_bandwidth();
  // The median of short runs (~1 ms), as the L2 bandwidth's: on a machine shared with
  // other work, one long run is likely to lose part of its time to another process.
  std::vector<double> peaks;
  for (int i = 0; i < kMachineSamples; ++i) peaks.push_back(vpdpbusd_peak_ops(kPeakIterations));
  std::nth_element(peaks.begin(), peaks.begin() + kMachineSamples / 2, peaks.end());
  m.vpdpbusd_ops = peaks[kMachineSamples / 2];
  return m;
}

void print_machine(const Machine& m) {
  if (!m.available) {
    std::printf("# machine: no bound for the batch-1 step (it needs the vpdpbusd peak: this CPU has no AVX-512 VNNI)\n");
    return;
  }
  std::printf(
      "# machine: L2 read %.1f GB/s (median of %d samples of %d passes over %zu KiB, half of %s%zu KiB L2, "
      "64-byte loads); vpdpbusd peak %.1f GOPS (median of %d samples of %ld instructions). Bound of a batch-1 "
      "int8 step: R (3H x H bytes) at that L2 rate + W x (3H x C multiply-adds) at that peak; of one frame per "
      "call: W and R (3H x (C + H) bytes) at that L2 rate\n",
      m.l2.bytes_per_s / 1e9, m.l2.samples, m.l2.passes, m.l2.buffer_bytes >> 10,
      m.l2.l2_reported ? "this core's " : "an assumed ", m.l2.l2_bytes >> 10, m.vpdpbusd_ops / 1e9, kMachineSamples,
      12 * kPeakIterations);
}

void print_bound(const Machine& m, int64_t H, int64_t C, double fixq_batch1_us, const StreamTimes& s) {
  if (!m.available) return;
  const double r_bytes = 3.0 * static_cast<double>(H) * static_cast<double>(H);
  const double w_bytes = 3.0 * static_cast<double>(H) * static_cast<double>(C);
  const double r_us = r_bytes / m.l2.bytes_per_s * 1e6, wx_us = 2.0 * w_bytes / m.vpdpbusd_ops * 1e6;
  const double step_us = r_us + wx_us, frame_us = (r_bytes + w_bytes) / m.l2.bytes_per_s * 1e6;
  const bool beyond_l2 = r_bytes + w_bytes > static_cast<double>(m.l2.l2_bytes);
  std::printf(
      "# bound H=%lld: batch-1 step %.2f us (R %.0f KiB from L2 %.2f us + W x at the peak %.2f us), fixq_int8 "
      "batch 1 at %.2fx it; one frame per call %.2f us (W + R %.0f KiB from L2), fixq_int8_stream at %.2fx, "
      "fixq_int8_forward_T1 at %.2fx%s\n",
      static_cast<long long>(H), step_us, r_bytes / 1024, r_us, wx_us, fixq_batch1_us / step_us, frame_us,
      (r_bytes + w_bytes) / 1024, s.us[kFixqInt8Stream] / frame_us, s.us[kFixqInt8ForwardT1] / frame_us,
      beyond_l2 ? " (the weights exceed L2 and come from L3: the bounds are optimistic)" : "");
}

}  // namespace fixq::bench::gru_bench
