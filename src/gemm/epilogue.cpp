// gemm_f32 (the four epilogues of vLLM's CUTLASS scaled_mm: Scaled, ScaledBias, Azp,
// AzpPerToken) and gemm_requant (the fixed-point requantization of docs/spec.md 2.4): exact integer accumulation, then one shared scalar epilogue pass, so
// every kernel path produces the same bits.
#include <cmath>
#include <vector>

#include "fixq/error.h"
#include "fixq/gemm.h"
#include "gemm/driver.h"
#include "gemm/epilogue_formulas.h"
#include "gemm/kernels.h"

namespace fixq {

namespace {

// Per-tensor (1 entry) or per-row / per-column (count entries); 0 entries if allowed.
template <class T>
void check_size(std::span<const T> v, int64_t count, bool may_be_empty, const char* what, const char* per) {
  const auto n = static_cast<int64_t>(v.size());
  if (n == 1 || n == count || (may_be_empty && n == 0)) return;
  fail("gemm: ", what, " has ", n, " entries; expected ", may_be_empty ? "0, " : "", "1 or ", count, " (", per, ")");
}

template <class T>
T pick(std::span<const T> v, int64_t i) {
  return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
}

int32_t zero_point(std::span<const int32_t> azp, int64_t m) { return azp.empty() ? 0 : pick(azp, m); }

// Runs the exact accumulation into a scratch matrix of the narrowest safe type and hands
// each row to f(m, row).
template <class F>
void with_accumulators(const MatrixView& a, const PackedB& b, F&& f) {
  if (gemm_detail::fits_int32(a.type, b)) {
    std::vector<int32_t> acc(static_cast<size_t>(a.rows * b.n()));
    gemm_detail::accumulate(a, b, acc.data(), b.n());
    for (int64_t m = 0; m < a.rows; ++m) f(m, acc.data() + m * b.n());
  } else {
    std::vector<int64_t> acc(static_cast<size_t>(a.rows * b.n()));
    gemm_detail::accumulate(a, b, acc.data(), b.n());
    for (int64_t m = 0; m < a.rows; ++m) f(m, acc.data() + m * b.n());
  }
}

}  // namespace

void gemm_f32(const MatrixView& a, const PackedB& b, const DequantEpilogue& e, float* d, int64_t ldd) {
  gemm_detail::validate(a, b);
  require(d != nullptr, "gemm_f32: null output pointer");
  require(ldd >= b.n(), "gemm_f32: output row stride ", ldd, " is smaller than a row of ", b.n());
  check_size(e.scale_a, a.rows, false, "scale_a", "per tensor or per token");
  check_size(e.scale_b, b.n(), false, "scale_b", "per tensor or per output channel");
  if (!e.bias.empty() && e.bias.size() != static_cast<size_t>(b.n()))
    fail("gemm_f32: bias has ", e.bias.size(), " entries; expected 0 or ", b.n());
  check_size(e.azp, a.rows, true, "azp", "per tensor or per token");
  for (float s : e.scale_a) require(std::isfinite(s) && s > 0, "gemm_f32: scale_a ", s, " must be finite and > 0");
  for (float s : e.scale_b) require(std::isfinite(s) && s > 0, "gemm_f32: scale_b ", s, " must be finite and > 0");
  const std::span<const int64_t> colsum = b.colsum();
  with_accumulators(a, b, [&](int64_t m, const auto* acc) {
    const float sa = pick(e.scale_a, m);
    const int32_t azp = zero_point(e.azp, m);
    float* out = d + m * ldd;
    for (int64_t n = 0; n < b.n(); ++n) {
      const int64_t v = gemm_detail::compensated(acc[n], azp, colsum[static_cast<size_t>(n)]);
      out[n] = e.bias.empty() ? gemm_detail::dequant_element(v, sa, pick(e.scale_b, n))
                              : gemm_detail::dequant_element_bias(v, sa, pick(e.scale_b, n), e.bias[static_cast<size_t>(n)]);
    }
  });
}

void gemm_requant(const MatrixView& a, const PackedB& b, const RequantEpilogue& e, void* out, int64_t ldo) {
  gemm_detail::validate(a, b);
  require(out != nullptr, "gemm_requant: null output pointer");
  require(ldo >= b.n(), "gemm_requant: output row stride ", ldo, " is smaller than a row of ", b.n());
  check_size(e.scale, b.n(), false, "scale", "per tensor or per output channel");
  if (!e.bias.empty() && e.bias.size() != static_cast<size_t>(b.n()))
    fail("gemm_requant: bias has ", e.bias.size(), " entries; expected 0 or ", b.n());
  check_size(e.azp, a.rows, true, "azp", "per tensor or per token");
  const IntRange type_range = int_type_range(e.out_type);
  require(e.out_min <= e.out_max && e.out_min >= type_range.qmin && e.out_max <= type_range.qmax,
          "gemm_requant: clamp range [", e.out_min, ", ", e.out_max, "] must be a non-empty part of [",
          type_range.qmin, ", ", type_range.qmax, "]");
  const IntRange clamp{e.out_min, e.out_max};
  const std::span<const int64_t> colsum = b.colsum();
  with_accumulators(a, b, [&](int64_t m, const auto* acc) {
    const int32_t azp = zero_point(e.azp, m);
    for (int64_t n = 0; n < b.n(); ++n) {
      const int64_t v = gemm_detail::compensated(acc[n], azp, colsum[static_cast<size_t>(n)]);
      const int32_t bias = e.bias.empty() ? 0 : e.bias[static_cast<size_t>(n)];
      const int32_t y = gemm_detail::requant_element(v, bias, pick(e.scale, n), e.zp_out, clamp);
      switch (e.out_type) {
        case IntType::U8: static_cast<uint8_t*>(out)[m * ldo + n] = static_cast<uint8_t>(y); break;
        case IntType::S8: static_cast<int8_t*>(out)[m * ldo + n] = static_cast<int8_t>(y); break;
        case IntType::S16: static_cast<int16_t*>(out)[m * ldo + n] = static_cast<int16_t>(y); break;
      }
    }
  });
}

}  // namespace fixq
