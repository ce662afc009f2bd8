// Test-side GPTQ v1 packing, written from the format definition independently of
// src/weightonly: the logical layer (codes, zero points, scales, g_idx) and the int32 tensors
// a GPTQ v1 checkpoint stores for it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "fixq/weightonly.h"

namespace fixq::gptq_test {

struct Layer {
  int bits = 4;
  int64_t k = 0, n = 0, groups = 0;
  std::vector<uint32_t> q;     // [k, n], each < 2^bits
  std::vector<int32_t> zeros;  // [groups, n], each < 2^bits
  std::vector<float> scales;   // [groups, n]
  std::vector<int32_t> g_idx;  // [k]
};

// A random layer; act_order draws a random permutation: g_idx[k] = position(k) / group size,
// as GPTQ's desc_act assigns groups in the order it quantized the rows.
inline Layer random_layer(int bits, int64_t k, int64_t n, int64_t groups, bool act_order, std::mt19937& rng) {
  Layer l{bits, k, n, groups, {}, {}, {}, {}};
  const uint32_t levels = 1u << bits;
  for (int64_t i = 0; i < k * n; ++i) l.q.push_back(static_cast<uint32_t>(rng() % levels));
  for (int64_t i = 0; i < groups * n; ++i) {
    l.zeros.push_back(static_cast<int32_t>(rng() % levels));
    l.scales.push_back(std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, -static_cast<int>(rng() % 12)));
  }
  std::vector<int32_t> position(static_cast<size_t>(k));
  std::iota(position.begin(), position.end(), 0);
  if (act_order) std::shuffle(position.begin(), position.end(), rng);
  for (int64_t r = 0; r < k; ++r) l.g_idx.push_back(static_cast<int32_t>(position[static_cast<size_t>(r)] / (k / groups)));
  return l;
}

// qweight[r, c] holds rows r*(32/b) .. r*(32/b) + 32/b - 1 of column c, row r*(32/b) + j at
// bits b*j; qzeros[g, c] holds (zero - 1) mod 2^b of columns c*(32/b) + j at bits b*j.
inline GptqTensors pack_v1(const Layer& l) {
  const int b = l.bits;
  const int64_t per = 32 / b;
  GptqTensors t;
  t.bits = b;
  t.qweight_shape = {l.k / per, l.n};
  t.qweight.assign(static_cast<size_t>(l.k / per * l.n), 0);
  for (int64_t r = 0; r < l.k / per; ++r)
    for (int64_t c = 0; c < l.n; ++c) {
      uint32_t word = 0;
      for (int64_t j = 0; j < per; ++j) word |= l.q[static_cast<size_t>((r * per + j) * l.n + c)] << (b * j);
      t.qweight[static_cast<size_t>(r * l.n + c)] = std::bit_cast<int32_t>(word);
    }
  t.qzeros_shape = {l.groups, l.n / per};
  for (int64_t g = 0; g < l.groups; ++g)
    for (int64_t c = 0; c < l.n / per; ++c) {
      uint32_t word = 0;
      for (int64_t j = 0; j < per; ++j) {
        const uint32_t stored = static_cast<uint32_t>(l.zeros[static_cast<size_t>(g * l.n + c * per + j)] - 1) & ((1u << b) - 1);
        word |= stored << (b * j);
      }
      t.qzeros.push_back(std::bit_cast<int32_t>(word));
    }
  t.scales_shape = {l.groups, l.n};
  t.scales = l.scales;
  t.g_idx = l.g_idx;
  return t;
}

inline PackedWeights to_packed(const Layer& l) {
  std::vector<uint8_t> q(l.q.begin(), l.q.end());
  return PackedWeights::from_parts(l.bits, l.k, l.n, q, l.scales, l.zeros, l.g_idx);
}

}  // namespace fixq::gptq_test
