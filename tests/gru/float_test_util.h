// Helpers shared by the float GRU tests: random models and inputs from a seed, and the
// largest difference between two arrays.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "fixq/gru.h"

namespace fixq::gru_test {

// n values uniform in [-scale, scale), the same for the same seed.
inline std::vector<float> random_values(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A model with random weights and biases, large enough that every gate sees a range.
inline GruModel random_model(int64_t input_size, int64_t hidden_size, int64_t layers, bool bidirectional,
                             unsigned seed) {
  GruModel m{input_size, hidden_size, layers, bidirectional, {}};
  for (int64_t l = 0; l < layers; ++l) {
    for (int d = 0; d < m.directions(); ++d) {
      GruCell c;
      c.input_size = l == 0 ? input_size : m.directions() * hidden_size;
      c.hidden_size = hidden_size;
      const auto rows = static_cast<std::size_t>(3 * hidden_size);
      c.W = random_values(rows * static_cast<std::size_t>(c.input_size), seed++, 0.8f);
      c.R = random_values(rows * static_cast<std::size_t>(hidden_size), seed++, 0.8f);
      c.bx = random_values(rows, seed++, 0.5f);
      c.br = random_values(rows, seed++, 0.5f);
      m.cells.push_back(std::move(c));
    }
  }
  return m;
}

// A random model with torch's default initialisation U(-1/sqrt(H), 1/sqrt(H)), times gain.
inline GruModel torch_init_model(int64_t C, int64_t H, int64_t layers, bool bidi, uint32_t seed, float gain = 1.0f) {
  std::mt19937 rng(seed);
  const float k = gain / std::sqrt(static_cast<float>(H));
  std::uniform_real_distribution<float> u(-k, k);
  GruModel m;
  m.input_size = C;
  m.hidden_size = H;
  m.num_layers = layers;
  m.bidirectional = bidi;
  for (int64_t l = 0; l < layers; ++l)
    for (int d = 0; d < m.directions(); ++d) {
      GruCell c;
      c.input_size = l == 0 ? C : m.directions() * H;
      c.hidden_size = H;
      c.W.resize(static_cast<size_t>(3 * H * c.input_size));
      c.R.resize(static_cast<size_t>(3 * H * H));
      c.bx.resize(static_cast<size_t>(3 * H));
      c.br.resize(static_cast<size_t>(3 * H));
      for (auto* v : {&c.W, &c.R, &c.bx, &c.br})
        for (float& x : *v) x = u(rng);
      m.cells.push_back(std::move(c));
    }
  return m;
}

// The dot product sum_k w_k x_k as fixq/gru.h words it, written from its text and not from
// the library: the k of each block of 32 consecutive ones through one chain of fused
// multiply-adds from +0, then the blocks' chains added left to right.
inline float documented_dot(const float* w, const float* x, int64_t n) {
  std::vector<float> chains;
  for (int64_t k = 0; k < n; ++k) {
    if (k % 32 == 0) chains.push_back(0.0f);
    chains.back() = std::fma(w[k], x[k], chains.back());
  }
  float sum = chains.empty() ? 0.0f : chains[0];
  for (std::size_t b = 1; b < chains.size(); ++b) sum = sum + chains[b];
  return sum;
}

inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.0f;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace fixq::gru_test
