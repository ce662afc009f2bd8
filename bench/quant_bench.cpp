// Throughput of quantize / dequantize / requantize, each fixq path beside a plain scalar
// loop measured in the same run. Items are elements; run with
//   build/bin/quant_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// and read the medians.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "fixq/arith.h"
#include "fixq/cpu.h"
#include "fixq/quant.h"

namespace {

constexpr float kScale = 0.0123f;
constexpr int32_t kZeroPoint = 3;

std::vector<float> random_floats(size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

fixq::QuantParams int8_params(const fixq::Shape& shape) {
  fixq::QuantScheme s;
  s.format = fixq::IntFormat::make(8, true);
  fixq::QuantParams p;
  p.scheme = s;
  p.shape = s.param_shape(shape);
  p.scale = {kScale};
  p.zero_point = {kZeroPoint};
  return p;
}

// The peer: what one writes without fixq, a loop over nearbyint (ties to even in the
// default rounding mode) that the compiler is free to vectorize.
void BM_PlainLoop_QuantizeF32ToS8(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<float> x = random_floats(n);
  std::vector<int8_t> q(n);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) {
      const float r = std::nearbyint(x[i] / kScale) + kZeroPoint;
      q[i] = static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));
    }
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_Fixq_QuantizeF32ToS8(benchmark::State& state, fixq::Isa isa) {
  if (!fixq::cpu_supports(isa)) {
    state.SkipWithError("instruction set not supported by this CPU");
    return;
  }
  fixq::set_isa_override(isa);
  const fixq::Shape shape{state.range(0)};
  const std::vector<float> x = random_floats(static_cast<size_t>(state.range(0)));
  const fixq::QuantParams p = int8_params(shape);
  std::vector<int8_t> q(x.size());
  for (auto _ : state) {
    fixq::quantize(x.data(), shape, p, q.data());
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  fixq::set_isa_override(std::nullopt);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * x.size()));
}

void BM_PlainLoop_DequantizeS8ToF32(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<int8_t> q(n);
  for (size_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(i * 37);
  std::vector<float> x(n);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(q[i] - kZeroPoint) * kScale;
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_Fixq_DequantizeS8ToF32(benchmark::State& state, fixq::Isa isa) {
  if (!fixq::cpu_supports(isa)) {
    state.SkipWithError("instruction set not supported by this CPU");
    return;
  }
  fixq::set_isa_override(isa);
  const fixq::Shape shape{state.range(0)};
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<int8_t> q(n);
  for (size_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(i * 37);
  const fixq::QuantParams p = int8_params(shape);
  std::vector<float> x(n);
  for (auto _ : state) {
    fixq::dequantize(q.data(), shape, p, x.data());
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  fixq::set_isa_override(std::nullopt);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// Requantization of int32 accumulators to int8 through a fixed-point multiplier: the
// plain loop in double precision against fixq's exact integer Rescale.
void BM_PlainLoop_RequantizeS32ToS8_Double(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<int32_t> acc(n);
  for (size_t i = 0; i < n; ++i) acc[i] = static_cast<int32_t>(i * 7919) - 1000000;
  std::vector<int8_t> q(n);
  const double sigma = 0.000734;
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i)
      q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(acc[i] * sigma) + 3.0, -128.0, 127.0));
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_Fixq_RequantizeS32ToS8_Rescale(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<int32_t> acc(n);
  for (size_t i = 0; i < n; ++i) acc[i] = static_cast<int32_t>(i * 7919) - 1000000;
  std::vector<int8_t> q(n);
  const fixq::Rescale r = fixq::Rescale::make(0.000734, 0, 1.0, 3, {-128, 127}, fixq::ScaleKind::Multiplier);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(r(acc[i]));
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// 16 Ki elements stay in L1/L2 (compute bound); 4 Mi elements stream from memory.
constexpr int64_t kSmall = 1 << 14, kLarge = 1 << 22;

BENCHMARK(BM_PlainLoop_QuantizeF32ToS8)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(BM_Fixq_QuantizeF32ToS8, scalar, fixq::Isa::Scalar)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(BM_Fixq_QuantizeF32ToS8, avx2, fixq::Isa::Avx2)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(BM_Fixq_QuantizeF32ToS8, avx512, fixq::Isa::Avx512)->Arg(kSmall)->Arg(kLarge);
BENCHMARK(BM_PlainLoop_DequantizeS8ToF32)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(BM_Fixq_DequantizeS8ToF32, scalar, fixq::Isa::Scalar)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(BM_Fixq_DequantizeS8ToF32, avx2, fixq::Isa::Avx2)->Arg(kSmall)->Arg(kLarge);
BENCHMARK_CAPTURE(BM_Fixq_DequantizeS8ToF32, avx512, fixq::Isa::Avx512)->Arg(kSmall)->Arg(kLarge);
BENCHMARK(BM_PlainLoop_RequantizeS32ToS8_Double)->Arg(kSmall);
BENCHMARK(BM_Fixq_RequantizeS32ToS8_Rescale)->Arg(kSmall);

}  // namespace

BENCHMARK_MAIN();
