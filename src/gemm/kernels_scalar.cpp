// The scalar micro-kernel (any layout of kernels.h: the reference of every family's
// kernels) and the scalar family's table.
#include <cstring>

#include "gemm/kernels.h"

namespace fixq::gemm_detail {

namespace {

int32_t b_value(const PanelFormat& f, const void* b, int64_t g, int j, int i) {
  const int64_t at = (g * f.nr + j) * f.kr + i;
  if (f.b_bytes == 1) return static_cast<const int8_t*>(b)[at];
  int16_t v;
  std::memcpy(&v, static_cast<const char*>(b) + 2 * at, sizeof v);
  return v;
}

int32_t a_value(const MicroKernel& k, const void* a, int64_t g, int r, int i) {
  const auto* p = static_cast<const char*>(a);
  switch (k.a) {
    case APacking::Pairs16: {
      int16_t v;
      std::memcpy(&v, p + ((g * k.mr + r) * 2 + i) * 2, sizeof v);
      return v;
    }
    case APacking::Quads8:
    case APacking::Split16: return static_cast<uint8_t>(p[(g * k.mr + r) * 4 + i]);
    case APacking::Quads8SignAbs: return static_cast<int8_t>(p[(g * k.mr + r) * 8 + i]);
    case APacking::TilesU8:
    case APacking::TilesS8: {
      const char v = p[((g / 16) * k.mr + r) * 64 + (g % 16) * 4 + i];
      return k.a == APacking::TilesU8 ? int32_t{static_cast<uint8_t>(v)} : int32_t{static_cast<int8_t>(v)};
    }
    case APacking::TilesSplit16: {
      // Slot 2 r is row r's low-byte tile row (u8), slot 2 r + 1 its high-byte one (s8).
      const char v = p[(((g / 16) * 2 + r % 2) * k.mr + r / 2) * 64 + (g % 16) * 4 + i];
      return r % 2 == 0 ? int32_t{static_cast<uint8_t>(v)} : int32_t{static_cast<int8_t>(v)};
    }
  }
  return 0;
}

}  // namespace

void tile_scalar(const MicroKernel& k, const TileArgs& t) {
  const bool split = k.a == APacking::Split16 || k.a == APacking::TilesSplit16;
  // Exact: the driver keeps every partial sum of a block inside int32; int64 here only so
  // that the reference itself cannot overflow while adding.
  auto slot_sum = [&](int r, int j) {
    int64_t s = 0;
    for (int64_t g = 0; g < t.groups; ++g)
      for (int i = 0; i < k.b.kr; ++i) s += int64_t{a_value(k, t.a, g, r, i)} * b_value(k.b, t.b, g, j, i);
    return s;
  };
  for (int r = 0; r < t.rows; ++r)
    for (int j = 0; j < t.cols; ++j) {
      // Split16: row r is slots 2r (low bytes) and 2r + 1 (high bytes plus 128); TilesSplit16
      // likewise, the high bytes as they are.
      const int64_t s = split ? 256 * slot_sum(2 * r + 1, j) + slot_sum(2 * r, j) : slot_sum(r, j);
      if (t.c64 != nullptr) {
        int64_t* c = t.c64 + r * t.ldc + j;
        *c = (t.accumulate ? *c : (t.init64 != nullptr ? t.init64[j] : 0)) + s;
      } else {
        int32_t* c = t.c + r * t.ldc + j;
        const int64_t base = t.accumulate ? *c : (t.init != nullptr ? t.init[j] : 0);
        *c = static_cast<int32_t>(base + s);
      }
    }
}

namespace {

constexpr PanelFormat kPairs8{2, 1, 16, false}, kPairs16{2, 2, 16, false};

void run_pairs8(const TileArgs& t);
void run_pairs16(const TileArgs& t);

constexpr MicroKernel kScalarB8{"scalar int16 pairs x s8, 4 x 16", 4, APacking::Pairs16, kPairs8, run_pairs8, 32 * 1024};
constexpr MicroKernel kScalarB16{"scalar int16 pairs x s16, 4 x 16", 4, APacking::Pairs16, kPairs16, run_pairs16, 32 * 1024};

void run_pairs8(const TileArgs& t) { tile_scalar(kScalarB8, t); }
void run_pairs16(const TileArgs& t) { tile_scalar(kScalarB16, t); }

}  // namespace

namespace scalar {
FIXQ_KERNEL_TABLE(GemmKernels, kGemm, Isa::Scalar){&kScalarB8, &kScalarB8, &kScalarB8, &kScalarB16};
}  // namespace scalar

}  // namespace fixq::gemm_detail
