// fixq bench gguf: every GGUF type's dot product and dequantizer, one thread, as CSV
// op,type,kernel,gb_per_s. gb_per_s counts the packed weight bytes read per second.
//   dot:     a GEMV, ggml's mul_mat with one activation row: 128 rows of 4096 weights (the
//            matrix stays in L2) against one row of the type's q8 partner (fixq::gguf::matvec);
//   dequant: the same 128 x 4096 weights into float32.
// kernel is the instruction-set family that ran (fixq::gguf::active_kernel_family).
// Last line: f32_write_peak_gb_per_s, glibc's memset over the same 2 MiB float32 output, the
// ceiling of any dequantizer here: a 4-bit type writes 7 to 8 bytes of float32 per packed
// byte, so its packed rate cannot exceed about an eighth of this line.
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "compare/compare.h"
#include "compare/timing.h"
#include "fixq/gguf.h"

namespace fixq::bench {

void bench_gguf(const GgufBenchOptions& o) {
  constexpr int64_t kRows = 128, kCols = 4096;
  const int samples = o.quick ? 1 : 5;
  const double min_s = o.quick ? 0.005 : 0.1;
  std::printf("# GEMV %lldx%lld against one q8 row (dot) and %lldx%lld to f32 (dequant), 1 thread, median of %d "
              "samples, %s\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), static_cast<long long>(kRows),
              static_cast<long long>(kCols), samples, bench_clock_name());
  std::printf("op,type,kernel,gb_per_s\n");
  std::mt19937 rng(1);
  std::normal_distribution<float> g;
  std::vector<float> w(static_cast<std::size_t>(kRows * kCols)), x(static_cast<std::size_t>(kCols));
  for (float& v : w) v = g(rng);
  for (float& v : x) v = g(rng);
  std::vector<float> out(static_cast<std::size_t>(kRows)), deq(w.size());
  for (const gguf::TypeTraits& t : gguf::all_types()) {
    const std::vector<std::byte> packed = gguf::quantize(t.type, w);
    const double bytes = static_cast<double>(packed.size());
    if (t.dot_type) {
      const std::vector<std::byte> y = gguf::quantize(*t.dot_type, x);
      const double s = median_seconds_per_call([&] { gguf::matvec(t.type, packed, kRows, y, out.data()); }, samples, min_s);
      std::printf("dot,%.*s,%s,%.2f\n", static_cast<int>(t.name.size()), t.name.data(), gguf::active_kernel_family(t.type, "matvec").c_str(), bytes / s / 1e9);
    }
    const double s = median_seconds_per_call([&] { gguf::dequantize(t.type, packed, deq.data()); }, samples, min_s);
    std::printf("dequant,%.*s,%s,%.2f\n", static_cast<int>(t.name.size()), t.name.data(), gguf::active_kernel_family(t.type, "dequantize").c_str(), bytes / s / 1e9);
    std::fflush(stdout);
  }
  int fill = 0;
  const double s = median_seconds_per_call(
      [&] {
        std::memset(deq.data(), fill++ & 0x7f, deq.size() * sizeof(float));
        asm volatile("" : : "r"(deq.data()) : "memory");  // the stores are observed
      },
      samples, min_s);
  std::printf("f32_write_peak_gb_per_s,%.2f\n", static_cast<double>(deq.size() * sizeof(float)) / s / 1e9);
}

}  // namespace fixq::bench
