// Timing for `fixq bench` (and the us/step of `fixq demo`), robust to a shared, noisy
// machine: warm up once, size each sample to at least min_seconds, report the median. The
// clock is wall time, or with FIXQ_BENCH_CLOCK=thread the calling thread's CPU time, which
// time slices taken by other processes do not inflate (every fixq and peer bench runs on
// the calling thread alone).
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace fixq::bench {

inline bool bench_uses_thread_clock() {
  const char* c = std::getenv("FIXQ_BENCH_CLOCK");
  return c != nullptr && std::strcmp(c, "thread") == 0;
}

inline double bench_now() {
  if (bench_uses_thread_clock()) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline const char* bench_clock_name() { return bench_uses_thread_clock() ? "thread CPU time" : "wall time"; }

inline double median_seconds_per_call(const std::function<void()>& f, int samples = 5, double min_seconds = 0.1) {
  f();  // warm up caches, page in buffers, let lazy initialization happen
  auto time = [&](long n) {
    const double t0 = bench_now();
    for (long i = 0; i < n; ++i) f();
    return bench_now() - t0;
  };
  long n = 1;
  for (double t = time(1); t < min_seconds && n < (1L << 30); t = time(n)) n *= 2;
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) per_call.push_back(time(n) / static_cast<double>(n));
  std::nth_element(per_call.begin(), per_call.begin() + samples / 2, per_call.end());
  return per_call[static_cast<size_t>(samples / 2)];
}

}  // namespace fixq::bench
