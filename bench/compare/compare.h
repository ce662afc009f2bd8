// `fixq bench`: fixq against its peers, single thread (bench gru: --threads), one process,
// the same inputs; CSV on stdout. The library fixq_compare runs them; the CLI only parses the options. Where this
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

// `fixq bench bf16`: bf16 x bf16 -> f32 GEMM against oneDNN's bf16 matmul, CSV
// M,N,K,fixq_gflops,onednn_gflops,ratio, then vdpbf16ps_peak_gflops.
struct Bf16BenchOptions {
  bool quick = false;  // skip the largest shapes (for smoke tests)
};
void bench_bf16(const Bf16BenchOptions& o);

// `fixq bench gguf`: every GGUF type's dot (a GEMV of 128x4096 weights against one q8 row)
// and dequantizer (128x4096 to f32), fixq alone (ggml is no library Debian ships), CSV
// op,type,kernel,gb_per_s counting the packed weight bytes.
struct GgufBenchOptions {
  bool quick = false;  // short samples (for smoke tests)
};
void bench_gguf(const GgufBenchOptions& o);

// `fixq bench gru`: the lists as typed on the command line ("256,512"); empty means the
// default (or --quick) set. Parsed and checked by bench_gru, which names a bad value.
// CSV H,batch,impl,us_per_step,ratio_vs_onednn_int8.
struct GruBenchOptions {
  bool quick = false;
  std::string hidden;  // H = C values
  std::string batch;   // batch sizes
  std::string steps;   // T
  std::string threads; // threads of fixq and oneDNN [1]
};
void bench_gru(const GruBenchOptions& o);

// `fixq bench model`: a whole model from an ONNX file, fixq float / int16 / int8 (pow2
// scales, quantized in the bench from a deterministic draw), one frame per call (the
// streaming step) and T frames per call, against torch float / torch dynamic int8
// (bench/peers/torch_model.py) and onnxruntime float (bench/peers/ort_model.js) where
// found; CSV batch,frames_per_call,impl,us_per_frame, an absent peer a '#' line.
struct ModelBenchOptions {
  std::string model;    // the ONNX file
  std::string batch;    // batch sizes [1,16]
  std::string frames;   // frames per call [1,100]; 1 = the streaming step
  std::string samples;  // samples per row, the median reported [5]
  bool quick = false;   // short samples (smoke tests)
  bool no_peers = false;
};
void bench_model(const ModelBenchOptions& o);

// Whether this build measures against oneDNN.
bool have_onednn();
// For a build without oneDNN: that only fixq is timed, and how to add oneDNN. Empty with it.
std::string onednn_missing_note();

}  // namespace fixq::bench
