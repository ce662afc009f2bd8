// The weight-only matmul y [M, 4096] = x [M, 4096] · W, W packed at 4 and 2 bits (groups
// of 128), fixq's AVX-512, AVX2 and scalar kernels (each where the CPU has it), beside
// OpenBLAS sgemm on the dequantized float32 W and beside dequantize +
// sgemm, all on one core in the same run. Ends with a summary of the CPU-time medians (or
// single runs) and the speed-ups. Without OpenBLAS (FIXQ_OPENBLAS, bench/peers/), fixq alone.
// Run as
//   build/bin/packed_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/weightonly.h"
#if FIXQ_PEER_OPENBLAS
#include "peers/openblas.h"
#endif

namespace {

constexpr int64_t kK = 4096, kN = 4096, kGroup = 128;

std::vector<float> normal(int64_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

const fixq::PackedWeights& weights(int bits) {
  static std::map<int, std::unique_ptr<fixq::PackedWeights>> cache;
  auto& w = cache[bits];
  if (!w) {
    const std::vector<float> f = normal(kK * kN, 0.02f, 1);
    w = std::make_unique<fixq::PackedWeights>(
        fixq::PackedWeights::quantize(f.data(), kK, kN, fixq::GroupQuantSpec{bits, kGroup, fixq::Symmetry::Asymmetric}));
  }
  return *w;
}

// The float32 matrix the packed weights stand for (the OpenBLAS peer's input).
[[maybe_unused]] const std::vector<float>& dequantized(int bits) {
  static std::map<int, std::vector<float>> cache;
  std::vector<float>& w = cache[bits];
  if (w.empty()) {
    w.resize(static_cast<size_t>(kK * kN));
    weights(bits).dequantize(w.data());
  }
  return w;
}

void bench_fixq(benchmark::State& state, int bits, fixq::Isa isa, int64_t m) {
  if (!fixq::cpu_supports(isa)) {
    state.SkipWithError("instruction set not supported by this CPU");
    return;
  }
  fixq::set_isa_override(isa);
  const fixq::PackedWeights& w = weights(bits);
  const std::vector<float> x = normal(m * kK, 1.0f, 2);
  std::vector<float> y(static_cast<size_t>(m * kN));
  for (auto _ : state) {
    fixq::weight_only_matmul(x.data(), m, w, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  fixq::set_isa_override(std::nullopt);
  state.counters["weight_bytes"] = static_cast<double>(kK * kN * bits / 8);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * kK * kN) * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

#if FIXQ_PEER_OPENBLAS
void sgemm(const float* x, const float* w, float* y, int64_t m) { fixq::peers::openblas_sgemm(x, w, y, m, kN, kK); }

// The peer: OpenBLAS on the float32 matrix the packed weights stand for.
void bench_sgemm(benchmark::State& state, int bits, int64_t m) {
  const std::vector<float>& w = dequantized(bits);
  const std::vector<float> x = normal(m * kK, 1.0f, 2);
  std::vector<float> y(static_cast<size_t>(m * kN));
  for (auto _ : state) {
    sgemm(x.data(), w.data(), y.data(), m);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["weight_bytes"] = static_cast<double>(kK * kN * 4);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * kK * kN) * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

// What one does without a fused kernel: dequantize the whole matrix, then sgemm.
void bench_dequantize_sgemm(benchmark::State& state, int bits, int64_t m) {
  const fixq::PackedWeights& w = weights(bits);
  std::vector<float> wf(static_cast<size_t>(kK * kN));
  const std::vector<float> x = normal(m * kK, 1.0f, 2);
  std::vector<float> y(static_cast<size_t>(m * kN));
  for (auto _ : state) {
    w.dequantize(wf.data());
    sgemm(x.data(), wf.data(), y.data(), m);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

#endif

std::string name(const char* what, int bits, int64_t m) {
  return std::string(what) + "/int" + std::to_string(bits) + "/M:" + std::to_string(m);
}

// Keeps the median CPU time of every benchmark (or of its only run) for the summary: on a
// shared machine CPU time is what one core spent, whoever else ran.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      times_ms[r.run_name.function_name] = r.GetAdjustedCPUTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> times_ms;
};

}  // namespace

int main(int argc, char** argv) {
#if FIXQ_PEER_OPENBLAS
  fixq::peers::openblas_single_thread();
#else
  std::fprintf(stderr, "packed_bench: built without OpenBLAS, so fixq is timed alone; to compare, install "
                       "libopenblas-dev and reconfigure with -DFIXQ_OPENBLAS=ON\n");
#endif
  for (const int bits : {4, 2})
    for (const int64_t m : {int64_t{1}, int64_t{16}}) {
      for (benchmark::internal::Benchmark* b : {
             benchmark::RegisterBenchmark(name("fixq_avx512", bits, m).c_str(), bench_fixq, bits, fixq::Isa::Avx512, m),
             benchmark::RegisterBenchmark(name("fixq_avx2", bits, m).c_str(), bench_fixq, bits, fixq::Isa::Avx2, m),
             benchmark::RegisterBenchmark(name("fixq_scalar", bits, m).c_str(), bench_fixq, bits, fixq::Isa::Scalar, m),
#if FIXQ_PEER_OPENBLAS
             benchmark::RegisterBenchmark(name("openblas_sgemm_dequantized", bits, m).c_str(), bench_sgemm, bits, m),
             benchmark::RegisterBenchmark(name("dequantize_then_openblas_sgemm", bits, m).c_str(), bench_dequantize_sgemm,
                                          bits, m),
#endif
           })
        b->Unit(benchmark::kMillisecond);
    }
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nK = N = %lld, groups of %lld, one core (OpenBLAS threads = 1); CPU ms (medians when repeated):\n",
              static_cast<long long>(kK), static_cast<long long>(kGroup));
  std::printf("%-9s %12s %12s %12s %12s %16s %12s %10s\n", "case", "fixq avx512", "fixq avx2", "fixq scalar",
              "sgemm(deq W)", "dequant+sgemm", "avx2/avx512", "sgemm/avx2");
  for (const int bits : {4, 2})
    for (const int64_t m : {int64_t{1}, int64_t{16}}) {
      auto t = [&](const char* what) {
        const auto it = reporter.times_ms.find(name(what, bits, m));
        return it == reporter.times_ms.end() ? 0.0 : it->second;
      };
      const double wide = t("fixq_avx512"), fast = t("fixq_avx2"), peer = t("openblas_sgemm_dequantized");
      std::printf("int%d M=%-3lld %12.3f %12.3f %12.3f %12.3f %16.3f %11.2fx %9.2fx\n", bits, static_cast<long long>(m),
                  wide, fast, t("fixq_scalar"), peer, t("dequantize_then_openblas_sgemm"), wide > 0 ? fast / wide : 0.0,
                  fast > 0 ? peer / fast : 0.0);
    }
  benchmark::Shutdown();
  return 0;
}
