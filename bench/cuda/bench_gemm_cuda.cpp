// fixq bench gemm --device cuda: the tensor-core GEMM with its epilogues over device buffers,
// N = K = 4096 and M = 1, 16, 64, 1024, 4096: raw s32, Scaled+bias and AzpPerToken+bias
// floats, s8 requantization; CUDA-event medians, TOPS = 2 M N K / time, and each row's
// fraction of the mma.sync int8 peak measured in the same run.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuda/bench_cuda.h"
#include "cuda/event_timer.h"
#include "cuda/runtime.h"
#include "fixq/cuda.h"

namespace fixq::bench {

double measured_mma_int8_tops();  // mma_peak.cu

void bench_gemm_cuda(const GemmCudaBenchOptions& o) {
  using cuda::detail::DeviceBuffer;
  const int64_t N = 4096, K = 4096;
  const std::vector<int64_t> ms = o.quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 16, 64, 1024, 4096};
  const cuda::DeviceInfo d = cuda::usable_device(0);
  cuda::detail::DeviceScope scope(0);
  const double peak = measured_mma_int8_tops();
  std::printf("# GPU 0: %s, compute capability %d.%d; mma.sync m16n8k32 s8 peak measured: %.1f TOPS\n", d.name.c_str(),
              d.major, d.minor, peak);
  std::printf("M,N,K,impl,epilogue,us,tops,fraction_of_mma_peak\n");
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> s8(-128, 127);
  std::vector<int8_t> b(static_cast<size_t>(N * K));
  for (int8_t& v : b) v = static_cast<int8_t>(s8(rng));
  const cuda::DeviceWeights w = cuda::DeviceWeights::upload(MatrixView{IntType::S8, b.data(), N, K, K});
  std::vector<float> sb(static_cast<size_t>(N), 0x1p-10f), bias(static_cast<size_t>(N), 0.25f);
  std::vector<FixedPointScale> scale(static_cast<size_t>(N), FixedPointScale::from_real(0x1p-14));
  cudaStream_t stream = nullptr;
  cuda::detail::check(cudaStreamCreate(&stream), "creating the bench's stream");
  for (int64_t M : ms) {
    std::vector<int8_t> a(static_cast<size_t>(M * K));
    for (int8_t& v : a) v = static_cast<int8_t>(s8(rng));
    std::vector<float> sa(static_cast<size_t>(M), 0x1p-7f);
    std::vector<int32_t> azp(static_cast<size_t>(M), 3);
    DeviceBuffer da(M * K, "the bench activations"), dout(M * N * 4, "the bench output");
    cuda::detail::copy_to_device(da.get(), a.data(), M * K, stream, "the bench activations");
    const MatrixView av{IntType::S8, da.get(), M, K, K};
    const cuda::DeviceDequantEpilogue scaled_bias = cuda::DeviceDequantEpilogue::upload({sa, sb, bias, {}}, w);
    const cuda::DeviceDequantEpilogue azp_bias = cuda::DeviceDequantEpilogue::upload({sa, sb, bias, azp}, w);
    RequantEpilogue rq;
    rq.scale = scale;
    rq.bias = {};
    const cuda::DeviceRequantEpilogue requant = cuda::DeviceRequantEpilogue::upload(rq, w);
    const std::pair<const char*, std::function<void(cudaStream_t)>> rows[] = {
        {"s32", [&](cudaStream_t s) { cuda::gemm_s32(av, w, dout.as<int32_t>(), N, {s}); }},
        {"scaled_bias", [&](cudaStream_t s) { cuda::gemm_f32(av, w, scaled_bias, dout.as<float>(), N, {s}); }},
        {"azp_per_token_bias", [&](cudaStream_t s) { cuda::gemm_f32(av, w, azp_bias, dout.as<float>(), N, {s}); }},
        {"requant_s8", [&](cudaStream_t s) { cuda::gemm_requant(av, w, requant, dout.get(), N, {s}); }},
    };
    for (const auto& [epilogue, f] : rows) {
      const double us = median_us_per_call(f, stream);
      const double tops = 2.0 * static_cast<double>(M * N * K) / (us * 1e-6) / 1e12;
      std::printf("%lld,%lld,%lld,fixq_cuda,%s,%.2f,%.2f,%.3f\n", static_cast<long long>(M), static_cast<long long>(N),
                  static_cast<long long>(K), epilogue, us, tops, tops / peak);
      std::fflush(stdout);
    }
  }
  cudaStreamDestroy(stream);
}

}  // namespace fixq::bench
