// The int8 tensor-core throughput this GPU reaches with mma.sync m16n8k32 (the instruction
// fixq's GEMM issues): every warp of a full grid runs independent chains of mma on register
// operands, so nothing but the tensor cores limits it. The GEMM rows report their fraction.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/runtime.h"

namespace fixq::bench {

namespace {

constexpr int kChains = 8, kIterations = 4096;

__global__ void mma_peak_kernel(const uint32_t* seed, int32_t* sink) {
  const int lane = threadIdx.x % 32;
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = seed[lane + 32 * i];
  for (int i = 0; i < 2; ++i) b[i] = seed[128 + lane + 32 * i];
  int32_t d[kChains][4] = {};
  for (int it = 0; it < kIterations; ++it)
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  int32_t s = 0;
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 0x7fffffff) *sink = s;  // keeps the chains alive
}

}  // namespace

// Tera-operations per second (2 per multiply-add) of mma.sync m16n8k32 s8 on the current device.
double measured_mma_int8_tops() {
  using cuda::detail::check;
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "the multiprocessor count");
  uint32_t* seed = nullptr;
  int32_t* sink = nullptr;
  check(cudaMalloc(&seed, 192 * 4), "the peak's operands");
  check(cudaMalloc(&sink, 4), "the peak's sink");
  check(cudaMemset(seed, 0x11, 192 * 4), "the peak's operands");
  const int blocks = sms * 8, threads = 256;
  mma_peak_kernel<<<blocks, threads>>>(seed, sink);  // warm-up
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  mma_peak_kernel<<<blocks, threads>>>(seed, sink);
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "timing the mma.sync peak");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(seed);
  cudaFree(sink);
  const double ops = 2.0 * 16 * 8 * 32 * kChains * static_cast<double>(kIterations) * (blocks * threads / 32);
  return ops / (ms * 1e-3) / 1e12;
}

}  // namespace fixq::bench
