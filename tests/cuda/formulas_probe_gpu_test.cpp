// The formula headers on a GPU: the probe of formulas_probe.h (fixed-point scales,
// requantization, the quantized primitives, both table layouts, the GEMM epilogues and the
// whole GRU unit update) run by a kernel over 200,000 cases, every output equal to the same
// function run on the host, which tests/gru/formulas_probe_test.cpp holds to independent
// oracles.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "cuda/formulas_probe.h"
#include "cuda/gpu_test_util.h"
#include "fixq/quant.h"
#include "gru/int/plan.h"

namespace fixq {
namespace {

QuantParams per_tensor(int bits, float lo, float hi) {
  QuantScheme s;
  s.format = IntFormat::make(bits, true);
  const Range r{lo, hi};
  return params_from_ranges(s, Shape{1}, std::span<const Range>(&r, 1));
}

// cudaMalloc'd copy of v, freed with the test.
struct DeviceCopy {
  void* p = nullptr;
  template <class T>
  explicit DeviceCopy(std::span<const T> v) {
    EXPECT_EQ(cudaMalloc(&p, v.size_bytes() + 1), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, v.data(), v.size_bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() { cudaFree(p); }
  const int32_t* i32() const { return static_cast<const int32_t*>(p); }
};

TEST(FormulaHeadersOnGpu, EveryCaseEqualsTheHost) {
  FIXQ_REQUIRE_GPU();
  const ActivationLut sig8 = ActivationLut::build(ActivationLut::Fn::Sigmoid, per_tensor(8, -6, 6), per_tensor(8, 0, 1));
  const ActivationLut tanh16 = ActivationLut::build(ActivationLut::Fn::Tanh, per_tensor(16, -4, 4), per_tensor(16, -1, 1));
  gru_detail::UnitConstants u{};
  for (int o = 0; o < gru_detail::kOperands; ++o) {
    u.zp[o] = (o * 37) % 19 - 9;
    u.range[o] = {-128, 127};
  }
  for (int s = 0; s < gru_detail::kUnitScales; ++s)
    u.ratio[s] = s % 2 ? FixedPointScale::pow2(s % 5) : FixedPointScale::from_real(0.37 + 0.11 * s);
  const std::vector<int32_t> bias{7, -3, 11, -20};
  for (int b = 0; b < gru_detail::kUnitBiases; ++b) u.bias_zp[b] = b - 2;
  u.q_one = 127;

  // The host's tables and biases, and the device's copies of the same.
  probe::Tables host{gru_detail::lut_view(sig8), gru_detail::lut_view(tanh16), u};
  for (int l = 0; l < gru_detail::kUnitLuts; ++l) host.unit.lut[l] = gru_detail::lut_view(sig8);
  for (int b = 0; b < gru_detail::kUnitBiases; ++b) host.unit.bias[b] = &bias[static_cast<size_t>(b)];
  const DeviceCopy d_sig(sig8.table()), d_tanh(tanh16.table()), d_bias{std::span<const int32_t>(bias)};
  probe::Tables device = host;
  device.direct.table = d_sig.i32();
  device.interpolated.table = d_tanh.i32();
  for (int l = 0; l < gru_detail::kUnitLuts; ++l) device.unit.lut[l].table = d_sig.i32();
  for (int b = 0; b < gru_detail::kUnitBiases; ++b) device.unit.bias[b] = d_bias.i32() + b;

  constexpr int kCases = 200000;
  std::vector<int64_t> gpu(static_cast<size_t>(kCases) * probe::kOutputs);
  int64_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, gpu.size() * sizeof(int64_t)), cudaSuccess);
  fixq_launch_formulas_probe(0, kCases, device, out);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(gpu.data(), out, gpu.size() * sizeof(int64_t), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  std::vector<int64_t> cpu(gpu.size());
  for (int i = 0; i < kCases; ++i) probe::run_case(static_cast<uint64_t>(i), host, cpu.data() + int64_t{i} * probe::kOutputs);
  for (int k = 0; k < probe::kOutputs; ++k) {
    int differ = 0, first = -1;
    for (int i = 0; i < kCases; ++i)
      if (gpu[static_cast<size_t>(i * probe::kOutputs + k)] != cpu[static_cast<size_t>(i * probe::kOutputs + k)] &&
          differ++ == 0)
        first = i;
    EXPECT_EQ(differ, 0) << "output " << k << ": " << differ << " cases differ, the first " << first;
  }
}

}  // namespace
}  // namespace fixq
