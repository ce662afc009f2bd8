// Private to the CLI: the `fixq bench` subcommands.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fixq/gru.h"

namespace fixq::cli {

struct BenchOptions {
  bool quick = false;  // skip the largest shapes (for smoke tests)
};

void bench_gemm(const BenchOptions& o);
void bench_bf16(const BenchOptions& o);  // bench_bf16.cpp
void bench_gguf(const BenchOptions& o);  // bench_gguf.cpp

// `fixq bench gru`: the lists as typed on the command line ("256,512"); empty means the
// default (or --quick) set. Parsed and checked by bench_gru, which names a bad value.
struct GruBenchOptions {
  bool quick = false;
  std::string hidden;  // H = C values
  std::string batch;   // batch sizes
  std::string steps;   // T
};

void bench_gru(const GruBenchOptions& o);

// ---- oneDNN's GRUs for bench gru (bench_gru_onednn.cpp) ----------------------------------

// The single-layer, unidirectional model in oneDNN's terms, built from a fixq model (gate
// z, r, g = oneDNN's u, r, o). Holds primitives, reordered weights and buffers, so run()
// times primitive execution only. x is [T, B, C] float, within [-1, 1] for the int8 GRU
// (its data quantization covers [-1, 1], the range of h).
class OnednnGru {
 public:
  enum class Kind {
    LbrF32,      // lbr_gru, f32: the same function as fixq's (torch's) GRU
    VanillaF32,  // gru, f32: r applied to h before R (oneDNN's only int8 GRU cell)
    VanillaU8S8  // gru, u8 activations and s8 weights (per output channel), f32 gates
  };
  OnednnGru(Kind kind, const GruModel& model, const std::vector<float>& x, int64_t steps, int64_t batch);
  ~OnednnGru();
  OnednnGru(const OnednnGru&) = delete;
  OnednnGru& operator=(const OnednnGru&) = delete;

  void run();                          // one forward over all T steps
  std::vector<float> output() const;   // dst_layer [T, B, H] of the last run, as float
  std::string implementation() const;  // oneDNN's impl_info_str, e.g. "ref:any"

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Forces oneDNN's OpenMP runtime to one thread (the environment variable is read when
// libgomp loads, before main, so it must be set through the API). Throws fixq::Error if
// the runtime cannot be reached.
void onednn_single_thread();
// "oneDNN 2.6.3 (OpenMP)".
std::string onednn_version_str();

}  // namespace fixq::cli
