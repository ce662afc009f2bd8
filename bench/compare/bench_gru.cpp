// fixq bench gru: fixq's GRU (int8, int16, float) against oneDNN's lbr_gru f32 and gru
// u8s8, on --threads N threads (1 unless told), one process, the same random model and
// inputs; CSV on stdout,
//   H,batch,impl,us_per_step,ratio_vs_onednn_int8
// with comment lines (#) for the machine, sanity checks and the thread check. At batch 1,
// the rows of one frame per call follow (bench_gru_stream.cpp), their ratio against
// oneDNN's gru u8s8 one frame per call, and the bound of the step. With N > 1, at batch >=
// 16 and H >= 512, a # ratio_vs_1_thread line gives each implementation's speed-up over
// one thread. Without oneDNN (FIXQ_PEER_ONEDNN unset), fixq's rows alone with the ratio
// empty.
#include <time.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "compare/bench_gru.h"
#include "compare/compare.h"
#include "compare/timing.h"
#include "fixq/cpu.h"
#include "fixq/kernels.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "fixq/gru.h"
#include "fixq/qgru.h"
#if FIXQ_PEER_ONEDNN
#include "peers/onednn.h"
#endif

namespace fixq::bench {

using namespace gru_bench;

namespace {

// The implementations, in the order of the CSV rows; kImpls names them.
enum Impl { kFixqInt8, kFixqInt16, kFixqFloat, kOnednnLbrF32, kOnednnU8S8, kImplCount };
const char* const kImpls[kImplCount] = {"fixq_int8", "fixq_int16", "fixq_float", "onednn_lbr_gru_f32",
                                        "onednn_gru_u8s8"};
// The rows this build times: all, or fixq's alone without oneDNN.
constexpr int kTimedImpls = FIXQ_PEER_ONEDNN ? kImplCount : kOnednnLbrF32;

// Upper bounds that keep a typo from allocating gigabytes (or thousands of threads).
constexpr int64_t kMaxHidden = 4096, kMaxBatch = 1024, kMaxSteps = 10000, kMaxThreads = 256;
// Where the thread speed-up is reported (issue 33's target: 2 threads, batch >= 16, H >= 512).
constexpr int64_t kRatioMinBatch = 16, kRatioMinHidden = 512;
constexpr double kMaxInputBytes = 1 << 30;

// One integer in [1, max], else a one-line error naming the option and the text.
int64_t parse_count(const char* option, const std::string& text, int64_t max) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1 || v > max)
    fail(option, ": '", text, "' is not an integer in [1, ", max, "]");
  return v;
}

// "256,512" -> {256, 512}, each item checked by parse_count.
std::vector<int64_t> parse_list(const char* option, const std::string& text, int64_t max) {
  std::vector<int64_t> out;
  for (size_t begin = 0;;) {
    const size_t end = std::min(text.find(',', begin), text.size());
    out.push_back(parse_count(option, text.substr(begin, end - begin), max));
    if (end == text.size()) return out;
    begin = end + 1;
  }
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// The model torch's nn.GRU would initialize: every parameter ~ U(-1/sqrt(H), 1/sqrt(H)).
GruModel random_model(int64_t hidden, std::mt19937& rng) {
  const float k = 1.0f / std::sqrt(static_cast<float>(hidden));
  std::uniform_real_distribution<float> u(-k, k);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (float& e : v) e = u(rng);
    return v;
  };
  GruModel m;
  m.input_size = m.hidden_size = hidden;
  GruCell c;
  c.input_size = c.hidden_size = hidden;
  const size_t rows = static_cast<size_t>(3 * hidden);
  c.W = fill(rows * static_cast<size_t>(hidden));
  c.R = fill(rows * static_cast<size_t>(hidden));
  c.bx = fill(rows);
  c.br = fill(rows);
  m.cells.push_back(std::move(c));
  return m;
}

std::vector<float> uniform_inputs(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = u(rng);
  return v;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double{a[i]} * b[i];
    aa += double{a[i]} * a[i];
    bb += double{b[i]} * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Threads of this process, from /proc (0 where /proc is absent).
int thread_count() {
  std::error_code ec;
  int n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

QuantizedGru quantize(const GruModel& model, const GruQuantConfig& config, const std::vector<float>& calib,
                      const Shape& calib_shape) {
  GruCalibrator cal(model, config, ObserverConfig{});  // min / max: the inputs are bounded
  cal.observe(calib.data(), calib_shape);
  return QuantizedGru(model, cal.finalize());
}

// The models of one hidden size: int8 / int16 calibrated on a few sequences from the
// inputs' distribution (capped in length: the float GRU runs them, and min / max of
// bounded inputs settle within a few steps).
Models make_models(int64_t hidden, int64_t steps, std::mt19937& rng) {
  GruModel model = random_model(hidden, rng);
  const Shape calib_shape{std::min<int64_t>(steps, 32), 4, hidden};
  const std::vector<float> calib = uniform_inputs(numel(calib_shape), rng);
  QuantizedGru q8 = quantize(model, GruQuantConfig::int8(ScaleKind::PowerOfTwo), calib, calib_shape);
  QuantizedGru q16 = quantize(model, GruQuantConfig::int16(ScaleKind::PowerOfTwo), calib, calib_shape);
  FloatGru prepared(model);
  return Models{std::move(model), std::move(prepared), std::move(q8), std::move(q16)};
}

// How a run is threaded: fixq's forward options and GEMM threads, oneDNN's OpenMP threads.
void use_threads(int n) {
  set_gemm_threads(n);
#if FIXQ_PEER_ONEDNN
  peers::onednn_threads(n);
#endif
}

// Times every implementation at one (H, batch) on `threads` threads and prints its CSV
// rows; adds the timings to totals. First, sanity checks so that no garbage is timed:
// oneDNN's lbr_gru must compute fixq's float GRU (same weights through the layout
// conversion), and its int8 gru must track its f32 gru on the same weights. At batch 1,
// the rows of one frame per call and the bound follow; with threads > 1 at large shapes,
// every implementation is timed once more on one thread for the speed-up.
void bench_shape(const Models& m, int64_t T, int64_t B, const Budget& budget, int threads, const Machine& machine,
                 std::mt19937& rng, bool first, Timing* totals, Timing* stream_totals) {
  const int64_t H = m.float_model.hidden_size;
  const Shape x_shape{T, B, H};
  const std::vector<float> x = uniform_inputs(numel(x_shape), rng);
  GruRunOptions opt;
  opt.threads = threads;

  // Each check's fixq forward is also the warm-up call of its timing.
  double first_call_seconds[kImplCount] = {};
  auto timed = [&](Impl impl, auto&& f) {
    const auto t0 = Clock::now();
    auto out = f();
    first_call_seconds[impl] = seconds_between(t0, Clock::now());
    return out;
  };
  const GruOutput y_float = timed(kFixqFloat, [&] { return m.float_gru.forward(x.data(), x_shape, opt); });
  const GruOutput y8 = timed(kFixqInt8, [&] { return m.q8.forward(x.data(), x_shape, opt); });
  const double cos8 = cosine(y8.y, y_float.y);
  const double cos16 = cosine(timed(kFixqInt16, [&] { return m.q16.forward(x.data(), x_shape, opt); }).y, y_float.y);
  // fixq writes into outputs kept between calls, as oneDNN writes its dst memory: neither
  // side times the allocation of megabytes of fresh output pages.
  GruOutput out8, out16, out_float;
  GruRunOptions one_thread;
  std::vector<std::function<void()>> runs = {
      [&] { m.q8.forward(x.data(), x_shape, out8, opt); },
      [&] { m.q16.forward(x.data(), x_shape, out16, opt); },
      [&] { m.float_gru.forward(x.data(), x_shape, out_float, opt); },
  };
  // The same calls on one thread, for the speed-up.
  std::vector<std::function<void()>> runs_1 = {
      [&] { m.q8.forward(x.data(), x_shape, out8, one_thread); },
      [&] { m.q16.forward(x.data(), x_shape, out16, one_thread); },
      [&] { m.float_gru.forward(x.data(), x_shape, out_float, one_thread); },
  };
#if FIXQ_PEER_ONEDNN
  peers::OnednnGru lbr(peers::OnednnGru::Kind::LbrF32, m.float_model, x, T, B);
  peers::OnednnGru u8s8(peers::OnednnGru::Kind::VanillaU8S8, m.float_model, x, T, B);
  if (first)
    std::printf("# oneDNN implementations: lbr_gru f32 %s, gru u8s8 %s\n", lbr.implementation().c_str(),
                u8s8.implementation().c_str());
  lbr.run();
  const double lbr_diff = max_abs_diff(lbr.output(), y_float.y);
  peers::OnednnGru vanilla_f32(peers::OnednnGru::Kind::VanillaF32, m.float_model, x, T, B);
  vanilla_f32.run();
  u8s8.run();
  const double onednn_int8_cos = cosine(u8s8.output(), vanilla_f32.output());
  std::printf(
      "# check H=%lld batch=%lld: onednn_lbr_gru_f32 vs fixq_float max|diff| %.2e; onednn_gru_u8s8 vs "
      "oneDNN gru f32 cosine %.5f; fixq_int8 / fixq_int16 vs fixq_float cosine %.5f / %.6f\n",
      static_cast<long long>(H), static_cast<long long>(B), lbr_diff, onednn_int8_cos, cos8, cos16);
  std::fflush(stdout);
  require(lbr_diff < 1e-3, "bench gru: oneDNN lbr_gru f32 differs from fixq's float GRU by ", lbr_diff, " at H=", H,
          ": the weight layout conversion is wrong");
  require(onednn_int8_cos > 0.99, "bench gru: oneDNN's int8 gru has cosine ", onednn_int8_cos,
          " to its f32 gru at H=", H, ": its quantization setup is wrong");
  runs.push_back([&] { lbr.run(); });
  runs.push_back([&] { u8s8.run(); });
#else
  (void)first;
  std::printf("# check H=%lld batch=%lld: fixq_int8 / fixq_int16 vs fixq_float cosine %.5f / %.6f\n",
              static_cast<long long>(H), static_cast<long long>(B), cos8, cos16);
#endif

  double us_per_step[kImplCount];
  for (int i = 0; i < kTimedImpls; ++i) {
    const Timing t = time_calls(runs[static_cast<size_t>(i)], budget, first_call_seconds[i]);
    us_per_step[i] = t.seconds_per_call / static_cast<double>(T) * 1e6;
    totals[i].cpu_seconds += t.cpu_seconds;
    totals[i].wall_seconds += t.wall_seconds;
  }
  for (int i = 0; i < kTimedImpls; ++i) {
    std::printf("%lld,%lld,%s,%.2f,", static_cast<long long>(H), static_cast<long long>(B), kImpls[i], us_per_step[i]);
    if constexpr (kTimedImpls > kOnednnU8S8) std::printf("%.3f", us_per_step[kOnednnU8S8] / us_per_step[i]);
    std::printf("\n");
  }
  std::fflush(stdout);

  if (B == 1) {
    // One frame per call, each row's ratio against oneDNN one frame per call.
    const StreamTimes st = time_streaming(m, x, T, y8.y, y_float.y, budget);
    for (int i = 0; i < kTimedStreamImpls; ++i) {
      stream_totals[i].cpu_seconds += st.timing[i].cpu_seconds;
      stream_totals[i].wall_seconds += st.timing[i].wall_seconds;
      std::printf("%lld,1,%s,%.2f,", static_cast<long long>(H), kStreamImpls[i], st.us[i]);
      if constexpr (kTimedStreamImpls > kOnednnU8S8Stream) std::printf("%.3f", st.us[kOnednnU8S8Stream] / st.us[i]);
      std::printf("\n");
    }
    print_bound(machine, H, m.float_model.input_size, us_per_step[kFixqInt8], st);
    std::fflush(stdout);
  }

  if (threads > 1 && B >= kRatioMinBatch && H >= kRatioMinHidden) {
    use_threads(1);
#if FIXQ_PEER_ONEDNN
    // oneDNN sizes a primitive's scratch for the thread count at its creation, and running
    // it on another count is undefined (it crashed): one-thread runs get primitives of their own.
    peers::OnednnGru lbr_1(peers::OnednnGru::Kind::LbrF32, m.float_model, x, T, B);
    peers::OnednnGru u8s8_1(peers::OnednnGru::Kind::VanillaU8S8, m.float_model, x, T, B);
    runs_1.push_back([&] { lbr_1.run(); });
    runs_1.push_back([&] { u8s8_1.run(); });
#endif
    std::printf("# ratio_vs_1_thread H=%lld batch=%lld (%d threads against 1):", static_cast<long long>(H),
                static_cast<long long>(B), threads);
    for (int i = 0; i < kTimedImpls; ++i) {
      const double us_1 = time_calls(runs_1[static_cast<size_t>(i)], budget).seconds_per_call / static_cast<double>(T) * 1e6;
      std::printf(" %s %.2f (1 thread %.2f us/step)%s", kImpls[i], us_1 / us_per_step[i], us_1,
                  i + 1 < kTimedImpls ? "," : "\n");
    }
    use_threads(threads);
    std::fflush(stdout);
  }
}

}  // namespace

namespace gru_bench {

Timing time_calls(const std::function<void()>& f, const Budget& budget, double warm_up_seconds) {
  double once = warm_up_seconds;
  if (once <= 0) {
    const auto w0 = Clock::now();
    f();
    once = seconds_between(w0, Clock::now());
  }
  once = std::max(once, 1e-9);
  const long reps = std::max(1L, static_cast<long>(std::ceil(budget.min_sample_s / once)));
  const int samples = once > budget.slow_call_s ? 3 : 5;
  Timing t;
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) {
    const double c0 = process_cpu_seconds(), b0 = bench_now();
    const auto t0 = Clock::now();
    for (long i = 0; i < reps; ++i) f();
    const double wall = seconds_between(t0, Clock::now());
    t.cpu_seconds += process_cpu_seconds() - c0;
    t.wall_seconds += wall;
    per_call.push_back((bench_now() - b0) / static_cast<double>(reps));  // FIXQ_BENCH_CLOCK (timing.h)
  }
  std::nth_element(per_call.begin(), per_call.begin() + samples / 2, per_call.end());
  t.seconds_per_call = per_call[static_cast<size_t>(samples / 2)];
  return t;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double{a[i]} - b[i]));
  return m;
}

}  // namespace gru_bench

void bench_gru(const GruBenchOptions& o) {
  const std::vector<int64_t> hiddens =
      parse_list("--hidden", o.hidden.empty() ? (o.quick ? "64,128" : "256,512,1024") : o.hidden, kMaxHidden);
  const std::vector<int64_t> batches =
      parse_list("--batch", o.batch.empty() ? (o.quick ? "1,4" : "1,16,64") : o.batch, kMaxBatch);
  const int64_t T = parse_count("--steps", o.steps.empty() ? (o.quick ? "20" : "100") : o.steps, kMaxSteps);
  const int threads = static_cast<int>(parse_count("--threads", o.threads.empty() ? "1" : o.threads, kMaxThreads));
  for (int64_t h : hiddens)
    for (int64_t b : batches) {
      const double bytes = 4.0 * static_cast<double>(T) * static_cast<double>(b) * static_cast<double>(h);
      if (bytes > kMaxInputBytes)
        fail("--steps ", T, " x --batch ", b, " x --hidden ", h, " inputs would take ", bytes / (1 << 20),
             " MiB; choose smaller shapes");
    }
  const Budget budget = o.quick ? Budget{0.005, 0.2} : Budget{0.05, 1.0};

  use_threads(threads);
#if FIXQ_PEER_ONEDNN
  const std::string peer = peers::onednn_version_str();
#else
  std::fprintf(stderr, "fixq: note: %s\n", onednn_missing_note().c_str());
  const std::string peer = "no oneDNN: " + onednn_missing_note();
#endif
  std::printf(
      "# fixq bench gru: %s; fixq kernels: gru step %s, gemm s8 x s8 %s (8+ rows: %s), gemm s16 x s8 %s (8+ rows: %s); %s; %d thread%s "
      "(fixq: GruRunOptions::threads, batch slices from batch %lld, and the GEMM's; oneDNN: OpenMP); T=%lld, "
      "1 layer, H = C; median of 5 samples (3 when one call exceeds %.1f s), %s\n",
      cpu_model().c_str(), active_kernel("gru step").c_str(), active_kernel("gemm s8 x s8").c_str(),
      active_kernel("gemm s8 x s8, 8+ rows").c_str(), active_kernel("gemm s16 x s8").c_str(),
      active_kernel("gemm s16 x s8, 8+ rows").c_str(), peer.c_str(), threads, threads == 1 ? "" : "s",
      static_cast<long long>(kGruMinThreadedBatch), static_cast<long long>(T), budget.slow_call_s,
      bench_clock_name());
  const Machine machine = measure_machine();
  print_machine(machine);
  std::printf("H,batch,impl,us_per_step,ratio_vs_onednn_int8\n");
  std::fflush(stdout);

  std::mt19937 rng(5);
  Timing totals[kImplCount], stream_totals[kStreamImplCount];
  bool first = true;
  for (int64_t H : hiddens) {
    const Models models = make_models(H, T, rng);
    for (int64_t B : batches) {
      bench_shape(models, T, B, budget, threads, machine, rng, first, totals, stream_totals);
      first = false;
    }
  }
  // A runtime that ran anything in parallel keeps its worker threads alive (libgomp's
  // pool, fixq's workers): on one thread, one thread in this process after every run
  // proves the timing was one thread. The CPU / wall ratio is below 1 on a machine shared
  // with other work.
  std::printf("# threads in this process after timing: %d; process CPU time / wall time while timing:", thread_count());
  for (int i = 0; i < kTimedImpls; ++i)
    std::printf(" %s %.2f,", kImpls[i], totals[i].cpu_seconds / totals[i].wall_seconds);
  for (int i = 0; i < kTimedStreamImpls; ++i)
    if (stream_totals[i].wall_seconds > 0)
      std::printf(" %s %.2f,", kStreamImpls[i], stream_totals[i].cpu_seconds / stream_totals[i].wall_seconds);
  std::printf("\n");
}

}  // namespace fixq::bench
