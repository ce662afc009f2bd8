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

inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.0f;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace fixq::gru_test
