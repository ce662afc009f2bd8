// The portable weight-only matmul kernel: per row of x and panel of 32 columns, each
// group's sum of x[k] * float(q - z) in row order, then y += sum * scale, group by group
// (the order fixq/weightonly.h's error bound describes; the loops over the 32 columns are
// independent, so a compiler may vectorize them without changing any result).
#include <algorithm>

#include "weightonly/layout.h"

namespace fixq::weightonly_detail {

namespace {

void matmul(const float* x, int64_t m, const View& w, float* y) {
  const int per = w.per_word();
  const uint32_t mask = (1u << w.bits) - 1;
  const int64_t rows_per_group = w.group_size / per;  // word rows
  for (int64_t i = 0; i < m; ++i) {
    const float* xr = x + i * w.k;
    for (int64_t p = 0; p < w.panels; ++p) {
      float out[kPanel] = {};
      for (int64_t g = 0; g < w.groups; ++g) {
        const float* s = w.scales + g * w.padded_cols() + p * kPanel;
        const int32_t* z = w.zeros + g * w.padded_cols() + p * kPanel;
        float acc[kPanel] = {};
        for (int64_t r = g * rows_per_group; r < (g + 1) * rows_per_group; ++r) {
          const uint32_t* words = w.words + (p * w.word_rows() + r) * kPanel;
          for (int j = 0; j < per; ++j) {
            const float xv = xr[r * per + j];
            for (int64_t c = 0; c < kPanel; ++c) {
              const auto q = static_cast<int32_t>((words[c] >> (j * w.bits)) & mask);
              acc[c] += xv * static_cast<float>(q - z[c]);
            }
          }
        }
        for (int64_t c = 0; c < kPanel; ++c) out[c] += acc[c] * s[c];
      }
      std::copy(out, out + std::min(kPanel, w.n - p * kPanel), y + i * w.n + p * kPanel);
    }
  }
}

}  // namespace

namespace scalar {
FIXQ_KERNEL_TABLE(PackedKernels, kPacked, Isa::Scalar){matmul};
}  // namespace scalar

}  // namespace fixq::weightonly_detail
