// The L2 read bandwidth (peak.h): the rate a weight stream that sits in L2 can be read at,
// the bound of a batch-1 GRU step (`fixq bench gru`).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "compare/peak.h"
#include "compare/timing.h"

namespace fixq::bench {

L2Bandwidth l2_read_bandwidth() {
  L2Bandwidth r;
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  r.l2_reported = l2 > 0;
  r.l2_bytes = r.l2_reported ? static_cast<size_t>(l2) : size_t{2} << 20;
  // Half the L2: room for the code's other lines, and no conflict misses to speak of.
  r.buffer_bytes = std::max<size_t>(r.l2_bytes / 2 / 512 * 512, 512);
  struct Free {
    void operator()(int8_t* p) const { std::free(p); }
  };
  const std::unique_ptr<int8_t, Free> buf(static_cast<int8_t*>(std::aligned_alloc(64, r.buffer_bytes)));
  if (buf == nullptr) throw std::bad_alloc();
  for (size_t i = 0; i < r.buffer_bytes; ++i) buf.get()[i] = static_cast<int8_t>(i * 7);
  auto sum = [&](long passes) { return sum_bytes_avx512(buf.get(), r.buffer_bytes, passes); };
  volatile int64_t sink = sum(4);  // into L2 (and the TLB), clocks up
  // Samples of ~1 ms (a pass of 1 MiB takes ~10 us): short enough that another process's
  // time slice spoils few of them, and the median ignores those.
  constexpr long kPasses = 100;
  constexpr int kSamples = 31;
  std::vector<double> rates;
  for (int s = 0; s < kSamples; ++s) {
    const double t0 = bench_now();
    sink = sink + sum(kPasses);
    const double dt = bench_now() - t0;
    rates.push_back(static_cast<double>(r.buffer_bytes) * kPasses / dt);
  }
  std::nth_element(rates.begin(), rates.begin() + kSamples / 2, rates.end());
  r.bytes_per_s = rates[kSamples / 2];
  r.samples = kSamples;
  r.passes = kPasses;
  return r;
}

}  // namespace fixq::bench
