// S8Weights packing and the scalar reference of the int8 x int8 product (q_s8_gemm.h).
#include "gru/q_s8_gemm.h"

#include "fixq/error.h"

namespace fixq::gru_detail {

S8Weights S8Weights::pack(const std::vector<int32_t>& q, int64_t n, int64_t k) {
  require(n >= 1 && k >= 1 && k < (int64_t{1} << 16) && q.size() == static_cast<size_t>(n * k),
          "internal: s8 weights of ", n, " x ", k, " do not match ", q.size(), " values");
  S8Weights w;
  w.n = n;
  w.k = k;
  w.k4 = (k + 3) / 4 * 4;
  w.panels = (n + 7) / 8;
  w.data.assign(static_cast<size_t>(w.panels * 8 * w.k4), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      int32_t v = q[static_cast<size_t>(r * k + c)];
      require(v >= -128 && v <= 127, "internal: weight ", v, " is not int8");
      if (v == -128) {
        w.minus128.emplace_back(static_cast<int32_t>(r), static_cast<int32_t>(c));
        v = -127;
      }
      const int64_t p = r / 8, row = r % 8, quad = c / 4;
      w.data[static_cast<size_t>(((p * (w.k4 / 4) + quad) * 8 + row) * 4 + c % 4)] = static_cast<int8_t>(v);
    }
  return w;
}

void s8_gemm_scalar(const S8Weights& w, const int8_t* x, int64_t ldx, int64_t rows, int32_t* acc, int64_t ldc) {
  const int64_t quads = w.k4 / 4;
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t r = 0; r < w.n; ++r) {
      const int8_t* panel = w.data.data() + (r / 8) * quads * 32;
      int32_t s = 0;
      for (int64_t q = 0; q < quads; ++q)
        for (int i = 0; i < 4; ++i) s += int32_t{x[m * ldx + 4 * q + i]} * panel[(q * 8 + r % 8) * 4 + i];
      acc[m * ldc + r] = s;
    }
  for (int64_t m = 0; m < rows; ++m)
    for (const auto& [r, c] : w.minus128) acc[m * ldc + r] -= x[m * ldx + c];
}

}  // namespace fixq::gru_detail
