// PackedWeights: validation of the parts, the canonical layout (act-order reordering and
// panel-major packing), element access and dequantization.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "fixq/error.h"
#include "fixq/weightonly.h"
#include "weightonly/layout.h"

namespace fixq {

namespace {

using weightonly_detail::kPanel;

// The group of every row: g_idx, or k / group_size when it is empty. Checks that each
// group has exactly group_size rows.
std::vector<int32_t> row_groups(std::span<const int32_t> g_idx, int64_t k, int64_t groups) {
  const int64_t g = k / groups;
  std::vector<int32_t> out(static_cast<size_t>(k));
  if (g_idx.empty()) {
    for (int64_t r = 0; r < k; ++r) out[static_cast<size_t>(r)] = static_cast<int32_t>(r / g);
    return out;
  }
  if (static_cast<int64_t>(g_idx.size()) != k) fail("g_idx has ", g_idx.size(), " entries for K = ", k, " rows");
  std::vector<int64_t> count(static_cast<size_t>(groups), 0);
  for (int64_t r = 0; r < k; ++r) {
    const int32_t v = g_idx[static_cast<size_t>(r)];
    if (v < 0 || v >= groups) fail("g_idx[", r, "] = ", v, " is not a group in [0, ", groups, ")");
    ++count[static_cast<size_t>(v)];
    out[static_cast<size_t>(r)] = v;
  }
  for (int64_t i = 0; i < groups; ++i)
    if (count[static_cast<size_t>(i)] != g)
      fail("g_idx puts ", count[static_cast<size_t>(i)], " rows in group ", i, ", not K / G = ", g);
  return out;
}

}  // namespace

PackedWeights PackedWeights::from_parts(int bits, int64_t k, int64_t n, std::span<const uint8_t> q,
                                        std::span<const float> scales, std::span<const int32_t> zeros,
                                        std::span<const int32_t> g_idx) {
  require(bits == 2 || bits == 4 || bits == 8, "packed weights have 2, 4 or 8 bits, not ", bits);
  if (k <= 0 || n <= 0) fail("packed weights need K > 0 and N > 0, got K = ", k, ", N = ", n);
  const int64_t kn = numel({k, n});
  if (static_cast<int64_t>(q.size()) != kn) fail(q.size(), " codes for a [", k, ", ", n, "] weight");
  if (scales.empty() || scales.size() % static_cast<size_t>(n) != 0)
    fail(scales.size(), " scales do not make [G, N = ", n, "] with G >= 1");
  const auto groups = static_cast<int64_t>(scales.size()) / n;
  if (zeros.size() != scales.size()) fail(zeros.size(), " zero points for ", scales.size(), " scales");
  if (k % groups != 0) fail("K = ", k, " rows do not split into G = ", groups, " equal groups");
  const int64_t g = k / groups, per = 32 / bits;
  if (g % per != 0)
    fail("group size ", g, " is not a multiple of 32 / ", bits, " = ", per, ": a packed int32 would straddle two groups");
  const uint32_t qmax = (1u << bits) - 1;
  for (int64_t i = 0; i < kn; ++i)
    if (q[static_cast<size_t>(i)] > qmax)
      fail("code ", int{q[static_cast<size_t>(i)]}, " at [", i / n, ", ", i % n, "] does not fit in ", bits, " bits");
  for (size_t i = 0; i < scales.size(); ++i) {
    if (!(std::isfinite(scales[i]) && scales[i] > 0.0f))
      fail("scale [", i / static_cast<size_t>(n), ", ", i % static_cast<size_t>(n), "] = ", scales[i],
           " must be finite and > 0");
    if (zeros[i] < 0 || zeros[i] > static_cast<int32_t>(qmax))
      fail("zero point [", i / static_cast<size_t>(n), ", ", i % static_cast<size_t>(n), "] = ", zeros[i],
           " is outside [0, ", qmax, "]");
  }
  const std::vector<int32_t> group = row_groups(g_idx, k, groups);

  PackedWeights w;
  w.bits_ = bits;
  w.k_ = k;
  w.n_ = n;
  w.group_size_ = g;
  std::vector<int32_t> perm(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) { return group[a] < group[b]; });
  bool identity = true;
  for (int64_t r = 0; r < k; ++r) identity = identity && perm[static_cast<size_t>(r)] == r;
  if (!identity) {
    w.canonical_.resize(static_cast<size_t>(k));
    for (int64_t r = 0; r < k; ++r) w.canonical_[static_cast<size_t>(perm[static_cast<size_t>(r)])] = static_cast<int32_t>(r);
    w.perm_ = std::move(perm);
  }

  const weightonly_detail::View v = weightonly_detail::Access::view(w);
  w.words_.assign(static_cast<size_t>(v.panels * v.word_rows() * kPanel), 0u);
  for (int64_t r = 0; r < k; ++r) {
    const int64_t orig = w.perm_.empty() ? r : w.perm_[static_cast<size_t>(r)];
    const int shift = static_cast<int>(r % per) * bits;
    for (int64_t c = 0; c < n; ++c) {
      const int64_t at = ((c / kPanel) * v.word_rows() + r / per) * kPanel + c % kPanel;
      w.words_[static_cast<size_t>(at)] |= uint32_t{q[static_cast<size_t>(orig * n + c)]} << shift;
    }
  }
  w.scales_.assign(static_cast<size_t>(groups * v.padded_cols()), 0.0f);
  w.zeros_.assign(w.scales_.size(), 0);
  for (int64_t i = 0; i < groups; ++i)
    for (int64_t c = 0; c < n; ++c) {
      w.scales_[static_cast<size_t>(i * v.padded_cols() + c)] = scales[static_cast<size_t>(i * n + c)];
      w.zeros_[static_cast<size_t>(i * v.padded_cols() + c)] = zeros[static_cast<size_t>(i * n + c)];
    }
  return w;
}

uint32_t PackedWeights::code(int64_t k, int64_t n) const {
  if (k < 0 || k >= k_ || n < 0 || n >= n_) fail("element [", k, ", ", n, "] is outside [", k_, ", ", n_, "]");
  const int64_t r = perm_.empty() ? k : canonical_[static_cast<size_t>(k)];
  const int64_t per = 32 / bits_, word_rows = k_ / per;
  const uint32_t word = words_[static_cast<size_t>(((n / kPanel) * word_rows + r / per) * kPanel + n % kPanel)];
  return (word >> (static_cast<int>(r % per) * bits_)) & ((1u << bits_) - 1);
}

int32_t PackedWeights::group_of_row(int64_t k) const {
  if (k < 0 || k >= k_) fail("row ", k, " is outside [0, ", k_, ")");
  const int64_t r = perm_.empty() ? k : canonical_[static_cast<size_t>(k)];
  return static_cast<int32_t>(r / group_size_);
}

float PackedWeights::scale(int64_t g, int64_t n) const {
  if (g < 0 || g >= groups() || n < 0 || n >= n_) fail("parameter [", g, ", ", n, "] is outside [", groups(), ", ", n_, "]");
  return scales_[static_cast<size_t>(g * ((n_ + kPanel - 1) / kPanel) * kPanel + n)];
}

int32_t PackedWeights::zero(int64_t g, int64_t n) const {
  if (g < 0 || g >= groups() || n < 0 || n >= n_) fail("parameter [", g, ", ", n, "] is outside [", groups(), ", ", n_, "]");
  return zeros_[static_cast<size_t>(g * ((n_ + kPanel - 1) / kPanel) * kPanel + n)];
}

void PackedWeights::dequantize(float* w) const {
  require(w != nullptr, "dequantize: null output pointer");
  const weightonly_detail::View v = weightonly_detail::Access::view(*this);
  const uint32_t mask = (1u << bits_) - 1;
  // Panel by panel, word row by word row: the words are read in storage order.
  for (int64_t p = 0; p < v.panels; ++p) {
    const int64_t cols = std::min(kPanel, n_ - p * kPanel);
    for (int64_t wr = 0; wr < v.word_rows(); ++wr) {
      const uint32_t* words = v.words + (p * v.word_rows() + wr) * kPanel;
      for (int j = 0; j < v.per_word(); ++j) {
        const int64_t r = wr * v.per_word() + j;
        float* row = w + (perm_.empty() ? r : perm_[static_cast<size_t>(r)]) * n_ + p * kPanel;
        const float* s = v.scales + (r / group_size_) * v.padded_cols() + p * kPanel;
        const int32_t* z = v.zeros + (r / group_size_) * v.padded_cols() + p * kPanel;
        for (int64_t c = 0; c < cols; ++c)
          row[c] = dequantize_value(static_cast<int32_t>((words[c] >> (j * bits_)) & mask), s[c], z[c]);
      }
    }
  }
}

int64_t PackedWeights::packed_bytes() const {
  return static_cast<int64_t>(words_.size() * sizeof(uint32_t) + scales_.size() * sizeof(float) +
                              zeros_.size() * sizeof(int32_t));
}

}  // namespace fixq
