// Packing blocks of A into the micro-panel layouts of kernels.h.
#include <cstring>

#include "gemm/kernels.h"

namespace fixq::gemm_detail {

namespace {

// A[m, k] as an integer; 0 past the last column (K padding).
int32_t element(const MatrixView& a, int64_t m, int64_t k) {
  if (k >= a.cols) return 0;
  const char* row = static_cast<const char*>(a.data) + m * a.stride * int_type_bytes(a.type);
  switch (a.type) {
    case IntType::U8: return static_cast<uint8_t>(row[k]);
    case IntType::S8: return static_cast<int8_t>(row[k]);
    case IntType::S16: {
      int16_t v;
      std::memcpy(&v, row + 2 * k, sizeof v);
      return v;
    }
  }
  return 0;
}

int kr_of(APacking p) { return p == APacking::Pairs16 ? 2 : 4; }

}  // namespace

int64_t a_group_bytes(const MicroKernel& k) {
  switch (k.a) {
    case APacking::Pairs16: return int64_t{k.mr} * 2 * 2;
    case APacking::Quads8: return int64_t{k.mr} * 4;
    case APacking::Quads8SignAbs: return int64_t{k.mr} * 8;
  }
  return 0;
}

void pack_a(const MicroKernel& kern, const MatrixView& a, int64_t row0, int64_t rows, int64_t g0, int64_t groups,
            std::vector<int8_t>& out) {
  const int mr = kern.mr, kr = kr_of(kern.a);
  const int64_t panels = (rows + mr - 1) / mr, panel_bytes = groups * a_group_bytes(kern);
  const auto need = static_cast<size_t>(panels * panel_bytes);
  if (out.size() < need) out.resize(need);
  // s8 values become u8 for vpdpbusd: plus 128 (the driver subtracts 128 * colsum[n]).
  const int32_t shift = kern.a == APacking::Quads8 && a.type == IntType::S8 ? 128 : 0;
  for (int64_t p = 0; p < panels; ++p) {
    int8_t* dst = out.data() + p * panel_bytes;
    for (int64_t g = 0; g < groups; ++g)
      for (int r = 0; r < mr; ++r) {
        const int64_t m = row0 + p * mr + r;
        const bool real = m < row0 + rows;
        for (int i = 0; i < kr; ++i) {
          const int64_t k = (g0 + g) * kr + i;
          const int32_t v = real ? element(a, m, k) : 0;
          switch (kern.a) {
            case APacking::Pairs16: {
              const auto e = static_cast<int16_t>(v);
              std::memcpy(dst + ((g * mr + r) * 2 + i) * 2, &e, sizeof e);
              break;
            }
            case APacking::Quads8:
              // K padding and padding rows stay 0 (not 0 + 128): their products must be 0.
              dst[(g * mr + r) * 4 + i] = static_cast<int8_t>(static_cast<uint8_t>(real && k < a.cols ? v + shift : 0));
              break;
            case APacking::Quads8SignAbs:
              dst[(g * mr + r) * 8 + i] = static_cast<int8_t>(v);
              dst[(g * mr + r) * 8 + 4 + i] = static_cast<int8_t>(static_cast<uint8_t>(v < 0 ? -v : v));
              break;
          }
        }
      }
  }
}

}  // namespace fixq::gemm_detail
