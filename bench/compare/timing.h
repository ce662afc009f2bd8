// Wall-clock timing for `fixq bench` (and the us/step of `fixq demo`), robust to a shared, noisy
// machine: warm up once, size each sample to at least min_seconds, report the median.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace fixq::bench {

inline double median_seconds_per_call(const std::function<void()>& f, int samples = 5, double min_seconds = 0.1) {
  using clock = std::chrono::steady_clock;
  f();  // warm up caches, page in buffers, let lazy initialization happen
  auto time = [&](long n) {
    const auto t0 = clock::now();
    for (long i = 0; i < n; ++i) f();
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  long n = 1;
  for (double t = time(1); t < min_seconds && n < (1L << 30); t = time(n)) n *= 2;
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) per_call.push_back(time(n) / static_cast<double>(n));
  std::nth_element(per_call.begin(), per_call.begin() + samples / 2, per_call.end());
  return per_call[static_cast<size_t>(samples / 2)];
}

}  // namespace fixq::bench
