// The blocked loops (GotoBLAS order: k-blocks, row blocks, B panels, row groups) and the
// raw gemm_s32 / gemm_s64 entry points.
#include "gemm/driver.h"

#include <algorithm>
#include <cstring>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "gemm/kernels.h"

namespace fixq::gemm_detail {

namespace {

// Rows of A per block: 64 rows x 256 k-pairs x 4 bytes = 64 KiB of packed A stay in L2
// while every B panel of the k-block passes.
constexpr int64_t kMc = 64;

template <class T>
void pack_a_rows(const MatrixView& a, int64_t kp_stride, std::vector<int32_t>& out) {
  for (int64_t m = 0; m < a.rows; ++m) {
    const char* row = static_cast<const char*>(a.data) + m * a.stride * static_cast<int64_t>(sizeof(T));
    for (int64_t kp = 0; kp < kp_stride; ++kp) {
      T lo{0}, hi{0};
      if (2 * kp < a.cols) std::memcpy(&lo, row + 2 * kp * sizeof(T), sizeof(T));
      if (2 * kp + 1 < a.cols) std::memcpy(&hi, row + (2 * kp + 1) * sizeof(T), sizeof(T));
      const uint32_t packed = static_cast<uint16_t>(static_cast<int16_t>(lo)) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(hi))) << 16);
      std::memcpy(&out[static_cast<size_t>(m * kp_stride + kp)], &packed, sizeof packed);
    }
  }
}

// A as int16 pairs (see kernels.h).
std::vector<int32_t> pack_a(const MatrixView& a, int64_t kp_stride) {
  std::vector<int32_t> out(static_cast<size_t>(a.rows * kp_stride));
  switch (a.type) {
    case IntType::U8: pack_a_rows<uint8_t>(a, kp_stride, out); break;
    case IntType::S8: pack_a_rows<int8_t>(a, kp_stride, out); break;
    case IntType::S16: pack_a_rows<int16_t>(a, kp_stride, out); break;
  }
  return out;
}

}  // namespace

void validate(const MatrixView& a, const PackedB& b) {
  require(a.data != nullptr, "gemm: null activation pointer");
  require(a.rows >= 1, "gemm: activations need at least one row, got ", a.rows);
  require(a.cols == b.k(), "gemm: activations have K = ", a.cols, " but the weights K = ", b.k());
  require(a.stride >= a.cols, "gemm: activation row stride ", a.stride, " is smaller than a row of ", a.cols);
  require(!(a.type == IntType::S16 && b.type() == IntType::S16),
          "gemm: s16 activations with s16 weights are not supported (a pair of products reaches 2^31);"
          " quantize the weights to s8");
}

template <class Acc>
void accumulate(const MatrixView& a, const PackedB& b, Acc* c, int64_t ldc) {
  const TileKernel kernel = tile_kernel_for(active_isa());
  const int64_t kpairs = b.k_pairs(), kc = block_pairs(a.type, b.type());
  const int64_t bytes_per_b = b.type() == IntType::S16 ? 2 : 1;
  const std::vector<int32_t> apack = pack_a(a, kpairs);
  int32_t tile[kMaxMr * kNr];
  for (int64_t kp0 = 0; kp0 < kpairs; kp0 += kc) {
    const int64_t kcur = std::min(kc, kpairs - kp0);
    for (int64_t m0 = 0; m0 < a.rows; m0 += kMc) {
      const int64_t m1 = std::min(a.rows, m0 + kMc);
      for (int64_t p = 0; p < b.panels(); ++p) {
        const void* bp = static_cast<const char*>(b.panel(p)) + kp0 * kNr * 2 * bytes_per_b;
        const int64_t n0 = p * kNr, ncols = std::min<int64_t>(kNr, b.n() - n0);
        for (int64_t r0 = m0; r0 < m1; r0 += kMaxMr) {
          const int mr = static_cast<int>(std::min<int64_t>(kMaxMr, m1 - r0));
          kernel(TileArgs{apack.data() + r0 * kpairs + kp0, kpairs, mr, bp, b.type() == IntType::S16, kcur, tile});
          for (int r = 0; r < mr; ++r) {
            Acc* row = c + (r0 + r) * ldc + n0;
            const int32_t* t = tile + r * kNr;
            if (kp0 == 0) {
              for (int64_t j = 0; j < ncols; ++j) row[j] = t[j];
            } else {
              for (int64_t j = 0; j < ncols; ++j) row[j] += t[j];
            }
          }
        }
      }
    }
  }
}

template void accumulate<int32_t>(const MatrixView&, const PackedB&, int32_t*, int64_t);
template void accumulate<int64_t>(const MatrixView&, const PackedB&, int64_t*, int64_t);

}  // namespace fixq::gemm_detail

namespace fixq {

void gemm_s32(const MatrixView& a, const PackedB& b, int32_t* c, int64_t ldc) {
  gemm_detail::validate(a, b);
  require(c != nullptr, "gemm_s32: null output pointer");
  require(ldc >= b.n(), "gemm_s32: output row stride ", ldc, " is smaller than a row of ", b.n());
  require(gemm_detail::fits_int32(a.type, b.type(), b.k()), "gemm_s32: K = ", b.k(),
          " can overflow int32 for these operand types; use gemm_s64");
  gemm_detail::accumulate(a, b, c, ldc);
}

void gemm_s64(const MatrixView& a, const PackedB& b, int64_t* c, int64_t ldc) {
  gemm_detail::validate(a, b);
  require(c != nullptr, "gemm_s64: null output pointer");
  require(ldc >= b.n(), "gemm_s64: output row stride ", ldc, " is smaller than a row of ", b.n());
  gemm_detail::accumulate(a, b, c, ldc);
}

}  // namespace fixq
