// Packing B [N, K] into 16-column panels of k-pairs, and its column sums.
#include <cstring>

#include "fixq/error.h"
#include "fixq/gemm.h"
#include "gemm/kernels.h"

namespace fixq {

namespace {

template <class T>
T element(const MatrixView& m, int64_t r, int64_t c) {
  T v;
  std::memcpy(&v, static_cast<const char*>(m.data) + (r * m.stride + c) * static_cast<int64_t>(sizeof(T)), sizeof v);
  return v;
}

template <class T>
void pack_panels(const MatrixView& b, int64_t k_pairs, std::vector<T>& out, std::vector<int64_t>& colsum) {
  constexpr int nr = gemm_detail::kNr;
  const int64_t panels = (b.rows + nr - 1) / nr;
  out.assign(static_cast<size_t>(panels * k_pairs * nr * 2), T{0});
  colsum.assign(static_cast<size_t>(b.rows), 0);
  for (int64_t n = 0; n < b.rows; ++n) {
    T* panel = out.data() + (n / nr) * k_pairs * nr * 2;
    const int64_t j = n % nr;
    for (int64_t k = 0; k < b.cols; ++k) {
      const T v = element<T>(b, n, k);
      panel[((k / 2) * nr + j) * 2 + (k % 2)] = v;
      colsum[static_cast<size_t>(n)] += v;
    }
  }
}

}  // namespace

PackedB PackedB::pack(const MatrixView& b) {
  require(b.data != nullptr, "PackedB::pack: null weight pointer");
  require(b.rows >= 1 && b.cols >= 1, "PackedB::pack: weights must be at least 1 x 1, got ", b.rows, " x ", b.cols);
  require(b.stride >= b.cols, "PackedB::pack: row stride ", b.stride, " is smaller than a row of ", b.cols);
  require(b.type == IntType::S8 || b.type == IntType::S16,
          "PackedB::pack: weights must be s8 or s16 (symmetric), got u8");
  PackedB p;
  p.type_ = b.type;
  p.n_ = b.rows;
  p.k_ = b.cols;
  if (b.type == IntType::S8) {
    pack_panels<int8_t>(b, p.k_pairs(), p.data8_, p.colsum_);
  } else {
    pack_panels<int16_t>(b, p.k_pairs(), p.data16_, p.colsum_);
  }
  return p;
}

const void* PackedB::panel(int64_t p) const {
  const int64_t offset = p * k_pairs() * gemm_detail::kNr * 2;
  if (type_ == IntType::S8) return data8_.data() + offset;
  return data16_.data() + offset;
}

}  // namespace fixq
