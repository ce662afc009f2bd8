// GPTQ weight rounding (Frantar et al. 2022, "GPTQ: Accurate Post-Training Quantization
// for Generative Pre-trained Transformers") for one matrix whose rows share the input
// statistics, with a per-row fallback to round-to-nearest.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "fixq/error.h"
#include "fixq/gru_ptq.h"

namespace fixq {

namespace {

// In-place lower Cholesky factor of the n x n symmetric matrix a (row-major): a = L L^T.
// False when a is not (numerically) positive definite.
bool cholesky_lower(std::vector<double>& a, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0.0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
    for (int64_t k = j + 1; k < n; ++k) a[j * n + k] = 0.0;
  }
  return true;
}

// The inverse of L L^T from the lower factor L: (L^-1)^T L^-1.
std::vector<double> inverse_from_cholesky(const std::vector<double>& l, int64_t n) {
  std::vector<double> linv(static_cast<size_t>(n * n), 0.0);  // lower triangular
  for (int64_t j = 0; j < n; ++j) {
    linv[j * n + j] = 1.0 / l[j * n + j];
    for (int64_t i = j + 1; i < n; ++i) {
      double s = 0.0;
      for (int64_t k = j; k < i; ++k) s += l[i * n + k] * linv[k * n + j];
      linv[i * n + j] = -s / l[i * n + i];
    }
  }
  std::vector<double> inv(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int64_t k = i; k < n; ++k) s += linv[k * n + i] * linv[k * n + j];
      inv[i * n + j] = inv[j * n + i] = s;
    }
  return inv;
}

// d^T h d for one row difference d (the row's share of sum_t |(W - W_q) x_t|^2).
double row_error(const double* d, const std::vector<double>& h, int64_t n) {
  double e = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (d[i] == 0.0) continue;
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += h[i * n + j] * d[j];
    e += d[i] * s;
  }
  return e;
}

}  // namespace

std::vector<int32_t> gptq_round(const std::vector<float>& w, int64_t rows, int64_t cols, const std::vector<double>& hessian,
                                const std::vector<float>& scale, int32_t qmin, int32_t qmax, double damp) {
  require(rows >= 1 && cols >= 1 && w.size() == static_cast<size_t>(rows * cols), "gptq_round: ", w.size(),
          " weights do not form [", rows, ", ", cols, "]");
  require(hessian.size() == static_cast<size_t>(cols * cols), "gptq_round: the input statistics must be [", cols, ", ",
          cols, "], got ", hessian.size(), " values");
  require(scale.size() == static_cast<size_t>(rows), "gptq_round: ", scale.size(), " scales for ", rows, " rows");
  require(qmin < qmax, "gptq_round: empty integer range [", qmin, ", ", qmax, "]");
  require(std::isfinite(damp) && damp >= 0.0, "gptq_round: damping must be finite and >= 0, got ", damp);
  for (float s : scale) require(std::isfinite(s) && s > 0.0f, "gptq_round: row scales must be finite and > 0, got ", s);
  for (float v : w) require(std::isfinite(v), "gptq_round: weights must be finite");
  for (double v : hessian) require(std::isfinite(v), "gptq_round: input statistics must be finite");
  const IntRange range{qmin, qmax};

  // Round-to-nearest, as quantize() does it: the fallback and the reference.
  std::vector<int32_t> nearest(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) nearest[r * cols + k] = quantize_value(w[r * cols + k], scale[r], 0, range);

  // Act order: columns with the largest input energy first; inputs never seen (zero
  // diagonal) get a unit diagonal, so that their rounding is nearest and costs nothing.
  std::vector<double> diag(static_cast<size_t>(cols));
  for (int64_t k = 0; k < cols; ++k) diag[k] = hessian[k * cols + k];
  std::vector<int64_t> perm(static_cast<size_t>(cols));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return diag[a] > diag[b]; });
  double mean_diag = 0.0;
  for (double d : diag) mean_diag += d > 0.0 ? d : 1.0;
  mean_diag /= static_cast<double>(cols);

  // U: the upper Cholesky factor of the damped inverse (H + lambda I)^-1 in act order,
  // U^T U = H^-1. The damping grows tenfold until the factorization succeeds.
  std::vector<double> u;
  double lambda = damp * mean_diag;
  for (int attempt = 0; u.empty(); ++attempt) {
    require(attempt < 16, "gptq_round: the input statistics cannot be factorized even with damping ", lambda);
    std::vector<double> hp(static_cast<size_t>(cols * cols));
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = 0; j < cols; ++j) hp[i * cols + j] = hessian[perm[i] * cols + perm[j]];
    for (int64_t i = 0; i < cols; ++i) {
      if (diag[perm[i]] <= 0.0) hp[i * cols + i] = 1.0;
      hp[i * cols + i] += lambda;
    }
    lambda = lambda > 0.0 ? lambda * 10.0 : 1e-6 * mean_diag;
    if (!cholesky_lower(hp, cols)) continue;
    std::vector<double> inv = inverse_from_cholesky(hp, cols);
    if (!cholesky_lower(inv, cols)) continue;
    u.assign(static_cast<size_t>(cols * cols), 0.0);  // U = the transpose of the inverse's lower factor
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = i; j < cols; ++j) u[i * cols + j] = inv[j * cols + i];
  }

  std::vector<int32_t> q(w.size());
  std::vector<double> row(static_cast<size_t>(cols)), d_gptq(static_cast<size_t>(cols)), d_near(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const double s = scale[r];
    for (int64_t i = 0; i < cols; ++i) row[i] = w[r * cols + perm[i]];
    std::vector<int32_t> qr(static_cast<size_t>(cols));
    for (int64_t i = 0; i < cols; ++i) {
      const double v = static_cast<double>(round_half_even_saturate(row[i] / s, qmin, qmax));
      qr[perm[i]] = static_cast<int32_t>(v);
      const double err = (row[i] - v * s) / u[i * cols + i];
      for (int64_t j = i + 1; j < cols; ++j) row[j] -= err * u[i * cols + j];
    }
    // Keep the better of the two roundings of this row, under the undamped statistics.
    for (int64_t k = 0; k < cols; ++k) {
      const double wk = w[r * cols + k];
      d_gptq[k] = wk - static_cast<double>(qr[k]) * s;
      d_near[k] = wk - static_cast<double>(nearest[r * cols + k]) * s;
    }
    const bool use_gptq = row_error(d_gptq.data(), hessian, cols) < row_error(d_near.data(), hessian, cols);
    for (int64_t k = 0; k < cols; ++k) q[r * cols + k] = use_gptq ? qr[k] : nearest[r * cols + k];
  }
  return q;
}

}  // namespace fixq
