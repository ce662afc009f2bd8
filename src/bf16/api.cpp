// The front end of fixq/bf16.h: checks arguments once, converts, packs, then runs the
// kernels of the active instruction set.
#include <bit>
#include <cstring>
#include <limits>

#include "bf16/kernels.h"
#include "fixq/bf16.h"
#include "fixq/error.h"
#include "fixq/lowp.h"

namespace fixq::bf16 {

namespace {

bf16_detail::Bf16Kernels::Dot active_dot() {
  return bf16_detail::registry().pick([](const bf16_detail::Bf16Kernels& k) { return k.dot; }).kernel;
}
bf16_detail::Bf16Kernels::Gemm active_gemm() {
  return bf16_detail::registry().pick([](const bf16_detail::Bf16Kernels& k) { return k.gemm; }).kernel;
}

// Sizes whose products address memory: positive strides and no int64 overflow.
void check_matrix(const char* what, int64_t rows, int64_t cols, int64_t ld) {
  require(rows >= 0 && cols >= 0, "bf16 ", what, ": negative shape [", rows, ", ", cols, "]");
  require(ld >= cols && ld >= 1, "bf16 ", what, ": row stride ", ld, " is smaller than its ", cols, " columns");
  require(rows == 0 || ld <= std::numeric_limits<int64_t>::max() / 4 / rows, "bf16 ", what, ": [", rows, ", ", cols,
          "] with row stride ", ld, " is too large to address");
}

}  // namespace

uint16_t from_float(float x) { return lowp_encode(LowpType::Bf16, x); }
float to_float(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }

void from_float(std::span<const float> x, std::span<uint16_t> out) {
  require(x.size() == out.size(), "bf16 conversion: ", x.size(), " floats into ", out.size(), " bf16 slots");
  if (!x.empty()) lowp_encode(LowpType::Bf16, x.data(), static_cast<int64_t>(x.size()), out.data());
}

std::vector<uint16_t> from_float(std::span<const float> x) {
  std::vector<uint16_t> out(x.size());
  from_float(x, out);
  return out;
}

float dot(std::span<const uint16_t> a, std::span<const uint16_t> b) {
  require(a.size() == b.size(), "bf16 dot: vectors of ", a.size(), " and ", b.size(),
          " elements; both operands need the same length");
  return active_dot()(a.data(), b.data(), static_cast<int64_t>(a.size()));
}

PackedB PackedB::pack(const uint16_t* b, int64_t n, int64_t k, int64_t ldb) {
  check_matrix("weights", n, k, ldb);
  require(b != nullptr || n == 0 || k == 0, "bf16 weights: null pointer for [", n, ", ", k, "]");
  PackedB p;
  p.n_ = n;
  p.k_ = k;
  const int64_t panels = (n + kPanel - 1) / kPanel, pairs = p.k_pairs();
  p.data_.assign(static_cast<std::size_t>(panels * pairs * kPanel), 0u);
  // k = 0 has no pairs to pack, and its rows need not exist (b may be null: no offset then).
  for (int64_t r = 0; r < n && pairs > 0; ++r) {
    const uint16_t* row = b + r * ldb;
    uint32_t* out = p.data_.data() + static_cast<std::size_t>(r / kPanel * pairs * kPanel + r % kPanel);
    for (int64_t q = 0; q < pairs; ++q) out[q * kPanel] = bf16_detail::pair_at(row, k, q);
  }
  return p;
}

PackedB PackedB::pack(std::span<const uint16_t> b, int64_t n, int64_t k) {
  require(n >= 0 && k >= 0, "bf16 weights: negative shape [", n, ", ", k, "]");
  require(k == 0 || n <= std::numeric_limits<int64_t>::max() / k, "bf16 weights: [", n, ", ", k, "] is too large");
  require(static_cast<int64_t>(b.size()) == n * k, "bf16 weights: ", b.size(), " values for a [", n, ", ", k,
          "] matrix of ", n * k);
  return pack(b.data(), n, k, k > 0 ? k : 1);
}

void gemm(const uint16_t* a, int64_t m, int64_t lda, const PackedB& b, float* c, int64_t ldc) {
  check_matrix("activations", m, b.k(), lda);
  check_matrix("output", m, b.n(), ldc);
  if (m == 0 || b.n() == 0) return;
  require(c != nullptr && (a != nullptr || b.k() == 0), "bf16 gemm: null activations or output");
  if (b.k() == 0) {  // empty sums: +0
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<std::size_t>(b.n()) * sizeof(float));
    return;
  }
  active_gemm()(a, m, lda, b.panel(0), b.n(), b.k(), c, ldc);
}

void gemm(const float* a, int64_t m, int64_t lda, const PackedB& b, float* c, int64_t ldc) {
  check_matrix("activations", m, b.k(), lda);
  require(a != nullptr || m == 0 || b.k() == 0, "bf16 gemm: null activations");
  std::vector<uint16_t> a16(static_cast<std::size_t>(m * b.k()));
  for (int64_t i = 0; i < m; ++i)
    from_float(std::span(a + i * lda, static_cast<std::size_t>(b.k())),
               std::span(a16.data() + i * b.k(), static_cast<std::size_t>(b.k())));
  gemm(a16.data(), m, b.k() > 0 ? b.k() : 1, b, c, ldc);
}

}  // namespace fixq::bf16
