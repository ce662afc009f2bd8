// Throughput of low-precision encode / decode and OCP MX quantize / dequantize, fixq's
// scalar reference beside its AVX2 and AVX-512 kernels (where the CPU has them), and for fp16 the CPU's own F16C conversion
// (vcvtps2ph / vcvtph2ps) as the peer; 64 Ki elements (in L2), one core. Ends with a
// summary in G elements/s (medians when repeated). Run as
//   build/bin/lowp_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/lowp.h"

namespace {

constexpr int64_t kN = 64 * 1024;

// Normal values at a scale that lands in the type's normal range, with 1% zeros.
std::vector<float> inputs(float sigma) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(kN));
  for (float& x : v) x = rng() % 100 == 0 ? 0.0f : d(rng);
  return v;
}

float sigma_for(fixq::LowpType t) { return fixq::lowp_info(t).max / 8.0f; }

bool use_isa(benchmark::State& state, fixq::Isa isa) {
  if (!fixq::cpu_supports(isa)) {
    state.SkipWithError("instruction set not supported by this CPU");
    return false;
  }
  fixq::set_isa_override(isa);
  return true;
}

void finish(benchmark::State& state) {
  fixq::set_isa_override(std::nullopt);
  state.SetItemsProcessed(state.iterations() * kN);
}

template <class Code>
void bench_encode(benchmark::State& state, fixq::LowpType t, fixq::Overflow o, fixq::Isa isa) {
  if (!use_isa(state, isa)) return;
  const std::vector<float> x = inputs(sigma_for(t));
  std::vector<Code> c(x.size());
  for (auto _ : state) {
    fixq::lowp_encode(t, x.data(), kN, c.data(), o);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

template <class Code>
void bench_decode(benchmark::State& state, fixq::LowpType t, fixq::Isa isa) {
  if (!use_isa(state, isa)) return;
  const std::vector<float> x = inputs(sigma_for(t));
  std::vector<Code> c(x.size());
  fixq::lowp_encode(t, x.data(), kN, c.data(), fixq::Overflow::Saturate);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    fixq::lowp_decode(t, c.data(), kN, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

void bench_mx_quantize(benchmark::State& state, fixq::MxType t, fixq::Isa isa) {
  if (!use_isa(state, isa)) return;
  const std::vector<float> x = inputs(1.0f);
  std::vector<uint8_t> q(static_cast<size_t>(kN / 32 * fixq::mx_info(t).block_bytes));
  for (auto _ : state) {
    fixq::mx_quantize(t, x.data(), kN, q.data());
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

void bench_mx_dequantize(benchmark::State& state, fixq::MxType t, fixq::Isa isa) {
  if (!use_isa(state, isa)) return;
  const std::vector<float> x = inputs(1.0f);
  std::vector<uint8_t> q(static_cast<size_t>(kN / 32 * fixq::mx_info(t).block_bytes));
  fixq::mx_quantize(t, x.data(), kN, q.data());
  std::vector<float> y(x.size());
  for (auto _ : state) {
    fixq::mx_dequantize(t, q.data(), kN, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

// The peers: the CPU's own float16 conversions (round to nearest even, overflow to inf,
// NaN payloads kept as the hardware does), 8 values per instruction.
__attribute__((target("avx2,f16c"))) void f16c_encode(const float* x, uint16_t* c) {
  for (int64_t i = 0; i < kN; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("avx2,f16c"))) void f16c_decode(const uint16_t* c, float* y) {
  for (int64_t i = 0; i < kN; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i))));
}

void bench_f16c_encode(benchmark::State& state) {
  if (!use_isa(state, fixq::Isa::Avx2)) return;
  const std::vector<float> x = inputs(1000.0f);
  std::vector<uint16_t> c(x.size());
  for (auto _ : state) {
    f16c_encode(x.data(), c.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

void bench_f16c_decode(benchmark::State& state) {
  if (!use_isa(state, fixq::Isa::Avx2)) return;
  const std::vector<float> x = inputs(1000.0f);
  std::vector<uint16_t> c(x.size());
  f16c_encode(x.data(), c.data());
  std::vector<float> y(x.size());
  for (auto _ : state) {
    f16c_decode(c.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

// Keeps each benchmark's median (or only) rate for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      const auto it = r.counters.find("items_per_second");
      if (it != r.counters.end()) rates[r.run_name.function_name] = it->second.value / 1e9;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> rates;
};

}  // namespace

int main(int argc, char** argv) {
  using fixq::Isa;
  std::vector<std::string> rows;
  auto both = [&](const std::string& op, auto&& reg) {
    rows.push_back(op);
    reg(op + "/scalar", Isa::Scalar);
    reg(op + "/avx2", Isa::Avx2);
    reg(op + "/avx512", Isa::Avx512);
  };
  for (int i = 0; i < fixq::kLowpTypeCount; ++i) {
    const auto t = static_cast<fixq::LowpType>(i);
    const std::string name(fixq::lowp_info(t).name);
    const bool wide = fixq::lowp_info(t).bits == 16;
    both("encode_" + name, [&](const std::string& n, Isa isa) {
      if (wide) {
        benchmark::RegisterBenchmark(n.c_str(), bench_encode<uint16_t>, t, fixq::Overflow::Default, isa);
      } else {
        benchmark::RegisterBenchmark(n.c_str(), bench_encode<uint8_t>, t, fixq::Overflow::Default, isa);
      }
    });
    both("encode_saturate_" + name, [&](const std::string& n, Isa isa) {
      if (wide) {
        benchmark::RegisterBenchmark(n.c_str(), bench_encode<uint16_t>, t, fixq::Overflow::Saturate, isa);
      } else {
        benchmark::RegisterBenchmark(n.c_str(), bench_encode<uint8_t>, t, fixq::Overflow::Saturate, isa);
      }
    });
    both("decode_" + name, [&](const std::string& n, Isa isa) {
      if (wide) {
        benchmark::RegisterBenchmark(n.c_str(), bench_decode<uint16_t>, t, isa);
      } else {
        benchmark::RegisterBenchmark(n.c_str(), bench_decode<uint8_t>, t, isa);
      }
    });
  }
  benchmark::RegisterBenchmark("encode_fp16/f16c_peer", bench_f16c_encode);
  benchmark::RegisterBenchmark("decode_fp16/f16c_peer", bench_f16c_decode);
  for (int i = 0; i < fixq::kMxTypeCount; ++i) {
    const auto t = static_cast<fixq::MxType>(i);
    const std::string name(fixq::mx_info(t).name);
    both("quantize_" + name, [&](const std::string& n, Isa isa) {
      benchmark::RegisterBenchmark(n.c_str(), bench_mx_quantize, t, isa);
    });
    both("dequantize_" + name, [&](const std::string& n, Isa isa) {
      benchmark::RegisterBenchmark(n.c_str(), bench_mx_dequantize, t, isa);
    });
  }
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\n%lld elements, one core; G elements/s (medians when repeated):\n", static_cast<long long>(kN));
  std::printf("%-28s %8s %8s %8s %8s\n", "operation", "scalar", "avx2", "avx512", "peer");
  for (const std::string& op : rows) {
    auto rate = [&](const std::string& path) {
      const auto it = reporter.rates.find(op + "/" + path);
      return it == reporter.rates.end() ? std::string("-") : std::to_string(it->second).substr(0, 5);
    };
    if (rate("scalar") == "-" && rate("avx2") == "-" && rate("avx512") == "-") continue;
    std::printf("%-28s %8s %8s %8s %8s\n", op.c_str(), rate("scalar").c_str(), rate("avx2").c_str(),
                rate("avx512").c_str(), rate("f16c_peer").c_str());
  }
  benchmark::Shutdown();
  return 0;
}
