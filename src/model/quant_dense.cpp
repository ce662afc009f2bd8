// Linear and Conv1d weights for the integer model: int8 per output row, rounded by GPTQ
// against the input statistics of the calibration run (or to nearest), the rounding's mean
// output error taken off the bias (docs/spec.md 10.2).
#include <algorithm>
#include <cmath>

#include "fixq/error.h"
#include "model/quant_state.h"

namespace fixq::model_detail {

void observe_dense(const ModelNode& node, const float* x, int64_t B, int64_t T, DenseStats& stats) {
  const int64_t Cin = node.in_features, K = node.kernel, d = node.dilation, G = node.groups;
  const int64_t cin_g = Cin / G, width = cin_g * K;
  stats.groups.resize(static_cast<size_t>(G));
  std::vector<float> rows(static_cast<size_t>(B * T * width));
  for (int64_t g = 0; g < G; ++g) {
    // Row (b, t): the window the weights of group g multiply, [i * K + j] = x_{t-(K-1-j)d}[g cin_g + i].
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        float* r = rows.data() + (b * T + t) * width;
        for (int64_t i = 0; i < cin_g; ++i)
          for (int64_t j = 0; j < K; ++j) {
            const int64_t s = t - (K - 1 - j) * d;
            r[i * K + j] = s < 0 ? 0.0f : x[(b * T + s) * Cin + g * cin_g + i];
          }
      }
    stats.groups[static_cast<size_t>(g)].add(rows.data(), B * T, width);
  }
}

DenseWeights round_dense(const ModelNode& node, const DenseStats& stats, const ModelQuantConfig& config) {
  const int64_t N = node.out_features, G = node.groups;
  const int64_t per_row = static_cast<int64_t>(node.weight.size()) / N, cout_g = N / G;
  DenseWeights out;
  // Symmetric int8 scales per row from the row's largest magnitude; a row of zeros gets [-1, 1].
  std::vector<Range> ranges;
  for (int64_t o = 0; o < N; ++o) {
    float m = 0.0f;
    for (int64_t k = 0; k < per_row; ++k) m = std::max(m, std::abs(node.weight[static_cast<size_t>(o * per_row + k)]));
    ranges.push_back({-(m == 0.0f ? 1.0f : m), m == 0.0f ? 1.0f : m});
  }
  const QuantScheme s = QuantScheme::make(8, true, Symmetry::Symmetric, config.scales, Granularity::PerChannel, 0);
  out.w_scale = params_from_ranges(s, {N, per_row}, ranges).scale;
  out.q_w.resize(node.weight.size());
  const bool gptq = config.rounding == WeightRounding::Gptq && stats.groups.size() == static_cast<size_t>(G);
  for (int64_t g = 0; g < G; ++g) {
    const auto first = static_cast<size_t>(g * cout_g * per_row), count = static_cast<size_t>(cout_g * per_row);
    const std::vector<float> w(node.weight.begin() + static_cast<std::ptrdiff_t>(first),
                               node.weight.begin() + static_cast<std::ptrdiff_t>(first + count));
    const std::vector<float> sc(out.w_scale.begin() + g * cout_g, out.w_scale.begin() + (g + 1) * cout_g);
    std::vector<int32_t> q;
    if (gptq) {
      q = gptq_round(w, cout_g, per_row, stats.groups[static_cast<size_t>(g)].second_moment(), sc, -127, 127);
    } else {
      for (size_t i = 0; i < count; ++i) q.push_back(quantize_value(w[i], sc[i / static_cast<size_t>(per_row)], 0, {-128, 127}));
    }
    std::copy(q.begin(), q.end(), out.q_w.begin() + static_cast<std::ptrdiff_t>(first));
  }
  out.bias.assign(node.bias.begin(), node.bias.end());
  if (config.bias_correction && !stats.groups.empty()) {
    // b' = b - (W_q - W) E[window]: the rounding's expected output error, per row.
    if (out.bias.empty()) out.bias.assign(static_cast<size_t>(N), 0.0);
    std::vector<std::vector<double>> means;
    for (const ptq_detail::Moments& m : stats.groups) means.push_back(m.mean());
    for (int64_t o = 0; o < N; ++o) {
      const std::vector<double>& mean = means[static_cast<size_t>(o / cout_g)];
      double e = 0.0;
      for (int64_t k = 0; k < per_row; ++k) {
        const auto i = static_cast<size_t>(o * per_row + k);
        e += (double(out.q_w[i]) * out.w_scale[static_cast<size_t>(o)] - node.weight[i]) * mean[static_cast<size_t>(k)];
      }
      out.bias[static_cast<size_t>(o)] -= e;
    }
  }
  return out;
}

std::vector<int32_t> dense_bias(const DenseWeights& w, float s_x) {
  std::vector<int32_t> q;
  for (size_t o = 0; o < w.bias.size(); ++o)
    q.push_back(static_cast<int32_t>(
        round_half_even_saturate(w.bias[o] / (double(s_x) * w.w_scale[o]), INT32_MIN, INT32_MAX)));
  return q;
}

}  // namespace fixq::model_detail
