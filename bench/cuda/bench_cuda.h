// `fixq bench gru|gemm --device cuda`: fixq's GPU kernels timed with CUDA events (warm-up,
// then the median of several samples), CSV on stdout in the columns of the peer scripts
// (bench/peers/torch_gru_cuda.py, torch_int_mm.py), so that scripts/gpu_check.sh can put
// them side by side from one run on one GPU.
#pragma once

#include <string>

namespace fixq::bench {

// CSV H,batch,impl,us_per_step for fixq_int8_cuda and fixq_int16_cuda (1 layer, C = H);
// the lists as typed ("256,512"), empty for the defaults (H 256,512,1024; batch 1,16,64;
// T 100).
struct GruCudaBenchOptions {
  bool quick = false;
  std::string hidden, batch, steps;
};
void bench_gru_cuda(const GruCudaBenchOptions& o);

// CSV M,N,K,impl,epilogue,us,tops for s8 x s8 (and u8 x s8) products with N = K = 4096 and
// M = 1, 16, 64, 1024, 4096, then the measured mma.sync int8 peak and each row's fraction.
struct GemmCudaBenchOptions {
  bool quick = false;
};
void bench_gemm_cuda(const GemmCudaBenchOptions& o);

}  // namespace fixq::bench
