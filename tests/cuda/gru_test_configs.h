// The GRU models the GPU tests run (gru_gpu_test.cpp) and the kernels each should get,
// shared with the host-side test that holds those expectations to the library's own
// choice (gru_kernel_choice_test.cpp), so that a GPU run cannot fail on a wrong expectation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/gpu_test_util.h"
#include "cuda/gru_kernels.h"
#include "fixq/qgru.h"

namespace fixq::cuda_test {

struct Config {
  std::string name;
  GruQuantConfig config;
  int64_t C, H, layers;
  bool bidi;
  bool flat = false;  // weights of one magnitude: int64 accumulators with 16-bit operands
};

inline std::vector<Config> configs() {
  using K = ScaleKind;
  auto json = [](const char* text) { return GruQuantConfig::from_json(text); };
  return {
      {"int8_pow2", GruQuantConfig::int8(K::PowerOfTwo), 13, 24, 2, true},
      {"int8_multiplier", GruQuantConfig::int8(K::Multiplier), 13, 24, 2, true},
      {"int16_pow2", GruQuantConfig::int16(K::PowerOfTwo), 13, 21, 2, true},
      {"int16_multiplier", GruQuantConfig::int16(K::Multiplier), 13, 21, 2, true},
      // 16-bit x with 8-bit W: the input projection on the tensor cores, a GEMM per byte of x.
      {"mixed_x16", json(R"({"version": 1, "base": "int8", "scales": "multiplier", "bits": {"x": 16, "g_pre": 16, "z_out": 16}})"),
       10, 33, 2, false},
      // 8-bit h and R in an int16 cell: dp4a recurrent products beside 16-bit operators.
      {"mixed_h8", json(R"({"version": 1, "base": "int16", "scales": "pow2", "bits": {"h": 8}})"), 9, 40, 1, true},
      // 16-bit W (int16 keeps W and R at 8 bits): the input projection on the plain kernel.
      {"mixed_w16", json(R"({"version": 1, "base": "int8", "scales": "pow2", "bits": {"W": 16}})"), 11, 28, 1, false},
      // 16-bit R against 8-bit h.
      {"mixed_r16", json(R"({"version": 1, "base": "int8", "scales": "pow2", "bits": {"R": 16, "Rh": 16}})"), 12, 30, 1, false},
      {"int8_pow2_h256", GruQuantConfig::int8(K::PowerOfTwo), 64, 256, 1, false},
      // int64 sums: 16-bit x times rows of 600 weights of 127 (the input projection), 16-bit
      // h times rows of 520 (the recurrence).
      {"int16_pow2_c600_flat", GruQuantConfig::int16(K::PowerOfTwo), 600, 24, 1, false, true},
      {"int16_multiplier_h520_flat", GruQuantConfig::int16(K::Multiplier), 16, 520, 1, false, true},
  };
}

inline QuantizedGru make_model(const Config& c, uint32_t seed) {
  GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, c.bidi, seed);
  if (c.flat)
    for (GruCell& cell : m.cells)
      for (std::vector<float>* w : {&cell.W, &cell.R})
        for (float& v : *w) v = v < 0 ? -127.0f / 2048 : 127.0f / 2048;
  return cuda_test::quantized_model(m, c.config, seed + 100);
}

// The input projection a model's cells should run on the fast path, from its configuration
// alone: the tensor cores take 8-bit W only; then 8-bit x directly, 16-bit x as its two bytes
// (the models here are far inside the int32 bounds that both need).
inline cuda::detail::InputProjection expected_input_projection(const QuantizedGru& q) {
  using cuda::detail::InputProjection;
  const GruQuantConfig& config = q.params().config;
  if (config.bits_of(GruOp::W) != 8) return InputProjection::Plain;
  return config.bits_of(GruOp::X) == 8 ? InputProjection::TensorCore : InputProjection::SplitBytes;
}

}  // namespace fixq::cuda_test
