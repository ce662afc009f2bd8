// oneDNN as a peer of fixq's benchmarks: its u8 x s8 GEMM and its GRUs, set up once so that
// a timed call is oneDNN's work only. Built (library fixq_peer_onednn) only where oneDNN 2.x
// is found at configure time (FIXQ_ONEDNN, bench/peers/CMakeLists.txt); nothing in the fixq
// library, the CLI's other commands or the Python package depends on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fixq/gru.h"

namespace fixq::peers {

// C [m, n] = A [m, k] (u8, row-major) x B^T (B [n, k] s8, row-major), int32, no offsets:
// dnnl_gemm_u8s8s32. Throws fixq::Error if oneDNN reports a failure.
void onednn_gemm_u8s8s32(const uint8_t* a, const int8_t* b, int32_t* c, int64_t m, int64_t n, int64_t k);

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
  // one_frame_per_call (gru u8s8 and lbr_gru f32): the primitive runs T = 1, and each run()
  // takes the next frame of x (cycling), writes its row of output() and hands its final
  // state (dst_iter; u8 for gru u8s8) to the next run as src_iter: a stream, as a real-time
  // app calls it, whose runs over T frames compute the whole-sequence run.
  OnednnGru(Kind kind, const GruModel& model, const std::vector<float>& x, int64_t steps, int64_t batch,
            bool one_frame_per_call = false);
  ~OnednnGru();
  OnednnGru(const OnednnGru&) = delete;
  OnednnGru& operator=(const OnednnGru&) = delete;

  void run();                          // one forward over all T steps (one frame per call: the next frame)
  std::vector<float> output() const;   // dst_layer [T, B, H] of the last run (of the last T frames), as float
  std::string implementation() const;  // oneDNN's impl_info_str, e.g. "ref:any"

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// C [m, n] (f32) = A [m, k] (bf16, row-major) x W^T, W [n, k] (bf16, row-major): oneDNN's
// bf16 matmul (it picks its own kernel, e.g. brg:avx512_core_bf16). The weights are reordered
// to the primitive's preferred layout once, here, so a timed run() is execution only, as
// fixq's PackedB is packed before timing. a and w must outlive the object.
class OnednnBf16Matmul {
 public:
  OnednnBf16Matmul(const uint16_t* a, const uint16_t* w, int64_t m, int64_t n, int64_t k);
  ~OnednnBf16Matmul();
  OnednnBf16Matmul(const OnednnBf16Matmul&) = delete;
  OnednnBf16Matmul& operator=(const OnednnBf16Matmul&) = delete;

  void run();
  const float* output() const;         // C of the last run, m x n
  std::string implementation() const;  // oneDNN's impl_info_str

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Sets oneDNN's OpenMP runtime to n threads (the environment variable is read when libgomp
// loads, before main, so it must be set through the API). Throws fixq::Error if the
// runtime cannot be reached, or is sequential and n > 1.
void onednn_threads(int n);
inline void onednn_single_thread() { onednn_threads(1); }
// "oneDNN 2.6.3 (OpenMP, max ISA avx512_core_vnni)".
std::string onednn_version_str();
// The widest instruction set oneDNN may use on this CPU ("max ISA avx512_core_vnni").
std::string onednn_isa_str();

}  // namespace fixq::peers
