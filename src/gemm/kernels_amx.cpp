// AMX micro-kernels for products of many rows (kernels.h: kManyRows), 16 rows x 64 columns:
//   u8 A x s8 B: tdpbusd; s8 A x s8 B: tdpbssd (no sign trick and no +128 shift: the tile
//   instruction multiplies signed bytes itself); s16 A x s8 B: both, on A's low and high
//   byte planes (run_split16).
// Each instruction adds, into every int32 element of a 16 x 16 C tile, the 64 products of a
// 16 x 64 byte A tile row with a B tile column: the same exact integers as vpdpbusd (the
// driver keeps every partial sum inside int32), so every path returns the same results.
//
// Tiles of the 8-bit kernels: 0-3 hold the 16 x 64 int32 sums (16 columns each), 4 and 5 A tiles of 16 k-groups
// (APacking::TilesU8 / TilesS8: 16 rows x 64 bytes, zero past A), 6 and 7 B tiles. B is read in
// place from the AVX-512 family's panels (PanelFormat 4 x 1 x 64: per k-group 64 columns x 4
// bytes), 16 columns (64 bytes) per tile row and 256 bytes from one group to the next; a
// last block of fewer than 16 groups reads the groups after it (or the zeros after the
// panels, panels.cpp) against zero activations.
#include "cpu/x86.h"

#include <cstring>

#include "gemm/kernels.h"
#include "gemm/planes_avx512.h"

namespace fixq::gemm_detail::amx {

namespace {

constexpr int kMr = 16, kNr = 64, kTileGroups = 16;
constexpr int64_t kKcBytes = 128 * 1024;
constexpr int64_t kAwakeSharingWork = int64_t{1} << 25;  // MicroKernel::awake_sharing_work

// The tile configuration: palette 1; every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

const TileConfig& config() {
  static const TileConfig c = [] {
    TileConfig t;
    for (int i = 0; i < 8; ++i) {
      t.colsb[i] = 64;
      t.rows[i] = 16;
    }
    return t;
  }();
  return c;
}

// One k-block of 16 groups: the A tile, then each 16-column B tile into its C tile. A
// alternates between tiles 4 and 5 from one block to the next and B between 6 and 7 from
// one column tile to the next, so that a load never waits for the product still reading
// the tile it would overwrite.
// (The tile intrinsics take their tile numbers as literals: each A tile has its own body.)
#define FIXQ_AMX_BLOCK(A)                                             \
  _tile_loadd(A, a, 64);                                              \
  _tile_loadd(6, b, kNr * 4);                                         \
  if constexpr (Signed) _tile_dpbssd(0, A, 6);                        \
  else _tile_dpbusd(0, A, 6);                                         \
  _tile_loadd(7, b + 64, kNr * 4);                                    \
  if constexpr (Signed) _tile_dpbssd(1, A, 7);                        \
  else _tile_dpbusd(1, A, 7);                                         \
  _tile_loadd(6, b + 128, kNr * 4);                                   \
  if constexpr (Signed) _tile_dpbssd(2, A, 6);                        \
  else _tile_dpbusd(2, A, 6);                                         \
  _tile_loadd(7, b + 192, kNr * 4);                                   \
  if constexpr (Signed) _tile_dpbssd(3, A, 7);                        \
  else _tile_dpbusd(3, A, 7);
template <bool Signed, int A>
[[gnu::always_inline]] inline void block(const int8_t* a, const int8_t* b) {
  if constexpr (A == 4) {
    FIXQ_AMX_BLOCK(4)
  } else {
    FIXQ_AMX_BLOCK(5)
  }
}
#undef FIXQ_AMX_BLOCK

// MicroKernel::begin: once per product and thread, since another library in the process
// (oneDNN) may have configured this thread's tiles differently since the last product. Between
// here and the product's last tile only the driver runs on the thread. Per tile, the
// configuration took ~125 ns of a 16 x 64 x 256 tile's ~220 (it waits for every tile
// operation before it), on the Intel Xeon of docs/performance.md.
void configure_tiles() { _tile_loadconfig(&config()); }

template <bool Signed>
void run(const TileArgs& t) {
  // A whole tile without start values (the AMX products have none: no +128 shift) starts
  // its C tiles from C when accumulating, else from zero, and is stored straight into C;
  // any other tile goes through a buffer of 16 x 64 sums.
  const bool direct = t.rows == kMr && t.cols == kNr && (t.accumulate || t.init == nullptr);
  if (direct && t.accumulate) {
    _tile_loadd(0, t.c, t.ldc * 4);
    _tile_loadd(1, t.c + 16, t.ldc * 4);
    _tile_loadd(2, t.c + 32, t.ldc * 4);
    _tile_loadd(3, t.c + 48, t.ldc * 4);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const auto* a = static_cast<const int8_t*>(t.a);
  const auto* b = static_cast<const int8_t*>(t.b);
  constexpr int64_t kABytes = kMr * 64, kBBytes = kTileGroups * kNr * 4;
  int64_t g = 0;
  for (; g + 2 * kTileGroups <= t.groups; g += 2 * kTileGroups, a += 2 * kABytes, b += 2 * kBBytes) {
    block<Signed, 4>(a, b);
    block<Signed, 5>(a + kABytes, b + kBBytes);
  }
  // One or two blocks left (the last one may have fewer than 16 groups).
  if (g < t.groups) block<Signed, 4>(a, b);
  if (g + kTileGroups < t.groups) block<Signed, 5>(a + kABytes, b + kBBytes);
  if (direct) {
    _tile_stored(0, t.c, t.ldc * 4);
    _tile_stored(1, t.c + 16, t.ldc * 4);
    _tile_stored(2, t.c + 32, t.ldc * 4);
    _tile_stored(3, t.c + 48, t.ldc * 4);
    return;
  }
  alignas(64) int32_t sums[kMr][kNr];
  _tile_stored(0, &sums[0][0], kNr * 4);
  _tile_stored(1, &sums[0][16], kNr * 4);
  _tile_stored(2, &sums[0][32], kNr * 4);
  _tile_stored(3, &sums[0][48], kNr * 4);
  // The real rows and columns: the sums plus C (accumulate) or the start values.
  for (int r = 0; r < t.rows; ++r) {
    int32_t* c = t.c + r * t.ldc;
    const int32_t* s = sums[r];
    if (t.accumulate) {
      for (int j = 0; j < t.cols; ++j) c[j] += s[j];
    } else if (t.init != nullptr) {
      for (int j = 0; j < t.cols; ++j) c[j] = t.init[j] + s[j];
    } else {
      std::memcpy(c, s, static_cast<size_t>(t.cols) * sizeof(int32_t));
    }
  }
}

// s16 A in two byte planes (APacking::TilesSplit16): per block, the low-byte tile (u8,
// tdpbusd) and the high-byte tile (s8, tdpbssd) against the same B tiles, the 64 columns in
// two halves of 32 so that both planes' sums fit the eight tiles: 0-1 the low plane's, 2-3
// the high plane's, 4 and 5 the A planes, 6 and 7 B. The tile's value is 256 * high + low,
// formed by store_plane_sums (gemm/planes_avx512.h), as the AVX-512 byte-plane kernel forms
// it; no start values (the high bytes are signed).
void run_split16(const TileArgs& t) {
  const auto* a = static_cast<const int8_t*>(t.a);
  const auto* b = static_cast<const int8_t*>(t.b);
  constexpr int64_t kPlaneBytes = kMr * 64, kBBytes = kTileGroups * kNr * 4;
  for (int half = 0; half < 2 && 32 * half < t.cols; ++half) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t g = 0, blk = 0; g < t.groups; g += kTileGroups, ++blk) {
      const int8_t* ab = a + blk * 2 * kPlaneBytes;
      const int8_t* bb = b + blk * kBBytes + 128 * half;
      _tile_loadd(4, ab, 64);
      _tile_loadd(5, ab + kPlaneBytes, 64);
      _tile_loadd(6, bb, kNr * 4);
      _tile_loadd(7, bb + 64, kNr * 4);
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
    alignas(64) int32_t lo[kMr][32], hi[kMr][32];
    _tile_stored(0, &lo[0][0], 32 * 4);
    _tile_stored(1, &lo[0][16], 32 * 4);
    _tile_stored(2, &hi[0][0], 32 * 4);
    _tile_stored(3, &hi[0][16], 32 * 4);
    // Columns of this half past t.cols are skipped by store_plane_sums.
    for (int r = 0; r < t.rows; ++r)
      for (int v = 0; v < 2; ++v)
        store_plane_sums(t, r, 32 * half + 16 * v, _mm512_load_si512(&lo[r][16 * v]),
                         _mm512_load_si512(&hi[r][16 * v]));
  }
}

constexpr PanelFormat kPanels{4, 1, kNr, false};  // the AVX-512 family's panels
constexpr MicroKernel kU8{"amx tdpbusd u8 x s8, 16 x 64", kMr, APacking::TilesU8, kPanels, run<false>, kKcBytes,
                            configure_tiles, kAwakeSharingWork};
constexpr MicroKernel kS8{"amx tdpbssd s8 x s8, 16 x 64", kMr, APacking::TilesS8, kPanels, run<true>, kKcBytes,
                            configure_tiles, kAwakeSharingWork};

}  // namespace

constexpr MicroKernel kSplit16{"amx tdpbusd + tdpbssd s16 as two byte planes x s8, 16 x 64", kMr,
                               APacking::TilesSplit16, kPanels, run_split16, kKcBytes, configure_tiles,
                               kAwakeSharingWork};

// Only the products of many rows: fewer rows take the AVX-512 family's kernels.
FIXQ_KERNEL_TABLE(GemmKernels, kGemm, Isa::Amx){nullptr, nullptr, nullptr, nullptr, &kU8, &kS8, &kSplit16};

}  // namespace fixq::gemm_detail::amx
