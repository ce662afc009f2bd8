// `fixq bench`: fixq against its peers, single thread, one process, the same inputs; CSV on
// stdout. The library fixq_compare runs them; the CLI only parses the options. Where this
// build has no oneDNN (bench/peers/), the same commands time fixq alone: the peer columns
// stay empty and a note on stderr (and a # line in the CSV) says how to add it.
#pragma once

#include <string>

namespace fixq::bench {

// `fixq bench gemm`: u8 x s8 -> s32 GEMM, CSV M,N,K,fixq_gops,onednn_gops,ratio,onednn_inexact_pct.
struct GemmBenchOptions {
  bool quick = false;  // skip the largest shapes (for smoke tests)
};
void bench_gemm(const GemmBenchOptions& o);

// `fixq bench gru`: the lists as typed on the command line ("256,512"); empty means the
// default (or --quick) set. Parsed and checked by bench_gru, which names a bad value.
// CSV H,batch,impl,us_per_step,ratio_vs_onednn_int8.
struct GruBenchOptions {
  bool quick = false;
  std::string hidden;  // H = C values
  std::string batch;   // batch sizes
  std::string steps;   // T
};
void bench_gru(const GruBenchOptions& o);

// Whether this build measures against oneDNN.
bool have_onednn();
// For a build without oneDNN: that only fixq is timed, and how to add oneDNN. Empty with it.
std::string onednn_missing_note();

}  // namespace fixq::bench
