// Median time of a GPU operation with CUDA events: warm-up calls, then samples of n calls
// each, n grown until a sample lasts min_ms; the median sample's time per call.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "cuda/runtime.h"

namespace fixq::bench {

inline double median_us_per_call(const std::function<void(cudaStream_t)>& f, cudaStream_t s, int samples = 7,
                                 float min_ms = 20.0f) {
  using cuda::detail::check;
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  auto time = [&](int n) {
    check(cudaEventRecord(start, s), "cudaEventRecord");
    for (int i = 0; i < n; ++i) f(s);
    check(cudaEventRecord(stop, s), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "timing a GPU operation");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms;
  };
  for (int i = 0; i < 3; ++i) time(1);  // warm-up: lazy loading, graphs, caches
  int n = 1;
  while (time(n) < min_ms && n < (1 << 20)) n *= 2;
  std::vector<double> us;
  for (int i = 0; i < samples; ++i) us.push_back(1000.0 * time(n) / n);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(us.begin(), us.begin() + samples / 2, us.end());
  return us[static_cast<size_t>(samples / 2)];
}

}  // namespace fixq::bench
