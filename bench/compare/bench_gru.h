// Private to fixq_compare: what the two halves of `fixq bench gru` share. bench_gru.cpp
// times whole sequences (T steps per call) and prints the table; bench_gru_stream.cpp times
// one frame per call at batch 1 and the machine's bound for that step.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compare/peak.h"
#include "fixq/gru.h"
#include "fixq/qgru.h"

namespace fixq::bench::gru_bench {

// How long to time: each sample repeats the call until it lasts min_sample_s; 5 samples,
// or 3 when a single call already takes over slow_call_s (fixq's float loop at large
// shapes), so the whole default run stays within minutes.
struct Budget {
  double min_sample_s;
  double slow_call_s;
};

struct Timing {
  double seconds_per_call = 0;
  double cpu_seconds = 0;   // process CPU time over the samples, every thread
  double wall_seconds = 0;  // wall time over the same samples
};

// Median seconds per call of f after one warm-up call, which also sizes the samples;
// `warm_up_seconds` > 0 says a call of f already ran (and took that long), so the slow
// float GRU is not run once more just to warm up.
Timing time_calls(const std::function<void()>& f, const Budget& budget, double warm_up_seconds = 0);

// The largest |a[i] - b[i]|.
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b);

// The models of one hidden size: float (and prepared, its weights packed once as oneDNN's
// are reordered once), and int8 / int16 calibrated on a few sequences.
struct Models {
  GruModel float_model;
  FloatGru float_gru;
  QuantizedGru q8, q16;
};

// The rows of one frame per call (T = 1 per call, batch 1), after the whole-sequence rows.
enum StreamImpl {
  kFixqInt8Stream,
  kFixqInt8ForwardT1,
  kFixqFloatStream,
  kOnednnU8S8Stream,
  kOnednnLbrF32Stream,
  kStreamImplCount
};
// fixq_int8_stream (QuantizedGruStream::step(x, h_out)), fixq_int8_forward_T1 (QuantizedGru::forward
// of one step, h0 the last call's h_n), fixq_float_stream (GruStream::step(x, h_out), the
// float GRU), onednn_gru_u8s8_stream (its gru u8s8 primitive of one step, the state carried
// in u8 between calls), onednn_lbr_gru_f32_stream (its lbr_gru f32 of one step, fixq_float's
// function).
extern const char* const kStreamImpls[kStreamImplCount];
// The rows this build times: all, or fixq's alone without oneDNN.
constexpr int kTimedStreamImpls = FIXQ_PEER_ONEDNN ? kStreamImplCount : kOnednnU8S8Stream;

// Times every streaming row over the frames of x [T, 1, H] (cycled), after checking that
// each computes the whole sequence: fixq's int8 rows give y8 (the int8 forward of x) and its
// float row y_float (the float forward) bit for bit, oneDNN's its own T-step run. us[i]:
// microseconds per frame; timing[i] as measured.
struct StreamTimes {
  double us[kStreamImplCount] = {};
  Timing timing[kStreamImplCount];
};
StreamTimes time_streaming(const Models& m, const std::vector<float>& x, int64_t T, const std::vector<float>& y8,
                           const std::vector<float>& y_float, const Budget& budget);

// The machine's ceilings for a batch-1 int8 step, measured once per run: the L2 read
// bandwidth and the vpdpbusd peak (available on AVX-512 VNNI CPUs only).
struct Machine {
  bool available = false;
  L2Bandwidth l2;
  double vpdpbusd_ops = 0;
};
Machine measure_machine();
// "# machine: ..." for the header.
void print_machine(const Machine& machine);
// "# bound H=...": the bound of a batch-1 int8 step (R, 3H x H bytes, read at the L2
// bandwidth, plus W x, 3H x C multiply-adds, at the vpdpbusd peak) and of one frame per
// call (W and R both read from L2), and fixq's rows as multiples of them.
void print_bound(const Machine& machine, int64_t H, int64_t C, double fixq_batch1_us, const StreamTimes& stream);

}  // namespace fixq::bench::gru_bench
