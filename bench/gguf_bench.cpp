// Throughput of the GGUF kernels, each instruction set this CPU has beside the scalar
// reference in the same run. Bytes are packed input: for dequantize the packed tensor, for
// dot both packed operands (x and its Q8 partner), for matvec the packed weights (as `fixq
// bench gguf` counts them), for quantize the float32 input. Run with
//   build/bin/gguf_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// (--benchmark_filter=Matvec/iq4_nl for one view) and read the medians of
// bytes_per_second. Every path computes the same bits (see fixq/gguf.h), so these are
// speeds of identical results.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/gguf.h"

namespace {

using fixq::Isa;
using fixq::gguf::Type;

// 16 Ki elements: the packed data stay in L1 and the floats of a dequantize in L2, so the
// kernels, not DRAM, are measured.
constexpr int64_t kElements = 1 << 14;

std::vector<float> gaussian(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

// Runs the body with the instruction set forced, or skips when the CPU lacks it.
class IsaScope {
 public:
  IsaScope(benchmark::State& state, Isa isa) : ok_(fixq::cpu_supports(isa)) {
    if (ok_)
      fixq::set_isa_override(isa);
    else
      state.SkipWithError("instruction set not supported by this CPU");
  }
  ~IsaScope() {
    if (ok_) fixq::set_isa_override(std::nullopt);
  }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

void BM_Dequantize(benchmark::State& state, Type type, Isa isa) {
  const std::vector<std::byte> packed = fixq::gguf::quantize(type, gaussian(kElements, 1));
  std::vector<float> out(kElements);
  IsaScope scope(state, isa);
  if (!scope.ok()) return;
  for (auto _ : state) {
    fixq::gguf::dequantize(type, packed, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * packed.size()));
}

void BM_Dot(benchmark::State& state, Type type, Isa isa) {
  const Type y_type = *fixq::gguf::traits(type).dot_type;
  const std::vector<std::byte> x = fixq::gguf::quantize(type, gaussian(kElements, 1));
  const std::vector<std::byte> y = fixq::gguf::quantize(y_type, gaussian(kElements, 2));
  IsaScope scope(state, isa);
  if (!scope.ok()) return;
  for (auto _ : state) benchmark::DoNotOptimize(fixq::gguf::dot(type, x, y));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (x.size() + y.size())));
}

// A GEMV of 128 rows of 4096 weights (in L2) against one activation row.
void BM_Matvec(benchmark::State& state, Type type, Isa isa) {
  constexpr int64_t kRows = 128, kCols = 4096;
  const Type y_type = *fixq::gguf::traits(type).dot_type;
  const std::vector<std::byte> x = fixq::gguf::quantize(type, gaussian(kRows * kCols, 1));
  const std::vector<std::byte> y = fixq::gguf::quantize(y_type, gaussian(kCols, 2));
  std::vector<float> out(kRows);
  IsaScope scope(state, isa);
  if (!scope.ok()) return;
  for (auto _ : state) {
    fixq::gguf::matvec(type, x, kRows, y, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * x.size()));
}

void BM_Quantize(benchmark::State& state, Type type, Isa isa) {
  const std::vector<float> x = gaussian(kElements, 1);
  std::vector<std::byte> out(fixq::gguf::packed_size(type, kElements));
  IsaScope scope(state, isa);
  if (!scope.ok()) return;
  for (auto _ : state) {
    fixq::gguf::quantize(type, x.data(), kElements, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kElements * sizeof(float)));
}

void register_all() {
  // Families this CPU lacks are left out (not registered as skipped entries).
  std::vector<Isa> isas;
  for (Isa isa : fixq::kAllIsas)
    if (fixq::cpu_supports(isa)) isas.push_back(isa);
  for (const fixq::gguf::TypeTraits& t : fixq::gguf::all_types()) {
    const std::string name(t.name);
    for (Isa isa : isas) {
      const std::string isa_name = fixq::to_string(isa);
      benchmark::RegisterBenchmark(("Dequantize/" + name + "/" + isa_name).c_str(), BM_Dequantize, t.type, isa);
      if (t.dot_type) {
        benchmark::RegisterBenchmark(("Dot/" + name + "/" + isa_name).c_str(), BM_Dot, t.type, isa);
        benchmark::RegisterBenchmark(("Matvec/" + name + "/" + isa_name).c_str(), BM_Matvec, t.type, isa);
      }
    }
  }
  for (Type t : {Type::Q8_0, Type::Q8_1, Type::Q8_K, Type::Q4_0, Type::Q4_K, Type::Q6_K})
    for (Isa isa : isas)
      benchmark::RegisterBenchmark(("Quantize/" + std::string(fixq::gguf::traits(t).name) + "/" + fixq::to_string(isa)).c_str(),
                                   BM_Quantize, t, isa);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
