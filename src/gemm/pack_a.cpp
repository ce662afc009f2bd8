// Packing blocks of A into the micro-panel layouts of kernels.h: one pass over each row,
// whole k-groups copied as 32-bit units.
#if defined(__x86_64__)
#include <emmintrin.h>  // SSE2: every x86-64 CPU has it
#endif

#include <algorithm>
#include <cstring>

#include "cpu/thread_address.h"
#include "gemm/kernels.h"

namespace fixq::gemm_detail {

namespace {

int kr_of(APacking p) { return p == APacking::Pairs16 ? 2 : 4; }

// One s16 row's k-groups as two byte planes (APacking::Split16): per group 4 low bytes,
// then 4 high bytes plus 128, in two consecutive slots (8 bytes) of its micro-panel.
void pack_split_row(const MatrixView& a, int64_t m, int64_t g0, int64_t groups, int8_t* dst, int64_t group_bytes) {
  const char* row = static_cast<const char*>(a.data) + m * a.stride * 2;
  const int64_t k0 = g0 * 4;
  const int64_t real = std::max<int64_t>(0, std::min(groups * 4, a.cols - k0));
  const int64_t whole = real / 4;
  for (int64_t g = 0; g < whole; ++g) {
    uint64_t x;  // four little-endian int16: low bytes at even positions
    std::memcpy(&x, row + 2 * (k0 + 4 * g), 8);
    const auto lo = static_cast<uint32_t>((x & 0xFF) | ((x >> 8) & 0xFF00) | ((x >> 16) & 0xFF0000) |
                                          ((x >> 24) & 0xFF000000));
    const auto hi = static_cast<uint32_t>(((x >> 8) & 0xFF) | ((x >> 16) & 0xFF00) | ((x >> 24) & 0xFF0000) |
                                          ((x >> 32) & 0xFF000000)) ^ 0x80808080u;
    std::memcpy(dst + g * group_bytes, &lo, 4);
    std::memcpy(dst + g * group_bytes + 4, &hi, 4);
  }
  for (int64_t g = whole; g < groups; ++g) {  // the group K ends in, and padding: value 0
    uint8_t q[8] = {0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80};
    for (int i = 0; i < 4; ++i)
      if (4 * g + i < real) {
        int16_t v;
        std::memcpy(&v, row + 2 * (k0 + 4 * g + i), 2);
        const auto u = static_cast<uint16_t>(v);
        q[i] = static_cast<uint8_t>(u & 0xFF);
        q[4 + i] = static_cast<uint8_t>((u >> 8) ^ 0x80);
      }
    std::memcpy(dst + g * group_bytes, q, 8);
  }
}

// Row m's values k0 .. k0 + n - 1 as int32 (0 past K).
void row_values(const MatrixView& a, int64_t m, int64_t k0, int64_t n, int32_t* out) {
  const int64_t real = std::max<int64_t>(0, std::min(n, a.cols - k0));
  const char* row = static_cast<const char*>(a.data) + m * a.stride * int_type_bytes(a.type);
  switch (a.type) {
    case IntType::U8: {
      const auto* p = reinterpret_cast<const uint8_t*>(row) + k0;
      for (int64_t i = 0; i < real; ++i) out[i] = p[i];
      break;
    }
    case IntType::S8: {
      const auto* p = reinterpret_cast<const int8_t*>(row) + k0;
      for (int64_t i = 0; i < real; ++i) out[i] = p[i];
      break;
    }
    case IntType::S16:
      for (int64_t i = 0; i < real; ++i) {
        int16_t v;
        std::memcpy(&v, row + 2 * (k0 + i), sizeof v);
        out[i] = v;
      }
      break;
  }
  for (int64_t i = real; i < n; ++i) out[i] = 0;
}

// One row's `groups` k-groups into the 4-byte units of its micro-panel slot (stride
// `unit_stride` units between groups).
void pack_row(const MicroKernel& kern, const MatrixView& a, int64_t m, int64_t g0, int64_t groups, int8_t* dst,
              int64_t group_bytes, std::vector<int32_t>& scratch) {
  const int kr = kr_of(kern.a);
  const int64_t k0 = g0 * kr, n = groups * kr;
  // 8-bit A into Quads8 is a plain byte copy (plus 128 for s8): take the fast way.
  if (kern.a == APacking::Quads8 && a.type != IntType::S16) {
    const auto* row = static_cast<const uint8_t*>(a.data) + m * a.stride;
    const int64_t real = std::max<int64_t>(0, std::min(n, a.cols - k0));
    const uint32_t flip = a.type == IntType::S8 ? 0x80808080u : 0u;
    const int64_t whole = real / 4;
    for (int64_t g = 0; g < whole; ++g) {
      uint32_t u;
      std::memcpy(&u, row + k0 + 4 * g, 4);
      u ^= flip;
      std::memcpy(dst + g * group_bytes, &u, 4);
    }
    for (int64_t g = whole; g < groups; ++g) {  // the group K ends in, and padding: 0
      uint8_t q[4] = {0, 0, 0, 0};
      for (int i = 0; i < 4; ++i)
        if (4 * g + i < real) q[i] = static_cast<uint8_t>(row[k0 + 4 * g + i] ^ (flip & 0xFF));
      std::memcpy(dst + g * group_bytes, q, 4);
    }
    return;
  }
  if (scratch.size() < static_cast<size_t>(n)) scratch.resize(static_cast<size_t>(n));
  row_values(a, m, k0, n, scratch.data());
  const int32_t* v = scratch.data();
  for (int64_t g = 0; g < groups; ++g) {
    int8_t* d = dst + g * group_bytes;
    switch (kern.a) {
      case APacking::Pairs16: {
        const int16_t pair[2] = {static_cast<int16_t>(v[2 * g]), static_cast<int16_t>(v[2 * g + 1])};
        std::memcpy(d, pair, 4);
        break;
      }
      case APacking::Split16:  // pack_split_row
      case APacking::TilesU8:  // pack_tiles
      case APacking::TilesS8:
      case APacking::TilesSplit16:
        break;
      case APacking::Quads8:  // u8 from s16 does not occur (s16 A takes Pairs16 or Split16)
        for (int i = 0; i < 4; ++i) d[i] = static_cast<int8_t>(v[4 * g + i]);
        break;
      case APacking::Quads8SignAbs:
        for (int i = 0; i < 4; ++i) {
          d[i] = static_cast<int8_t>(v[4 * g + i]);
          d[4 + i] = static_cast<int8_t>(static_cast<uint8_t>(v[4 * g + i] < 0 ? -v[4 * g + i] : v[4 * g + i]));
        }
        break;
    }
  }
}

// Six 8-bit rows of A into a Quads8 panel (6 x 4 bytes per k-group), four groups at a time:
// a 4 x 4 transpose of 32-bit units for rows 0-3 and an interleave for rows 4-5, then each
// group's 24 bytes as one 16- and one 8-byte store. The same bytes as pack_row: packing A
// was ~4% of a GRU step at batch 16 (the recurrent product's 16 x 256 state and the
// projection's rows), 2% after; a packing-bound 240 x 64 x 256 product runs 1.4x faster.
// Returns the groups packed, a multiple of 4 whose bytes all lie inside K; pack_row takes
// the rest.
// (On other architectures it packs nothing, and pack_row packs every group.)
int64_t pack_six_rows_quads8(const MatrixView& a, int64_t m, int64_t g0, int64_t groups, int8_t* dst) {
#if !defined(__x86_64__)
  (void)a, (void)m, (void)g0, (void)groups, (void)dst;
  return 0;
#else
  const int64_t k0 = g0 * 4;
  const int64_t whole = std::max<int64_t>(0, std::min(groups, (a.cols - k0) / 4));
  const int64_t vec = whole / 4 * 4;
  const __m128i flip = _mm_set1_epi8(a.type == IntType::S8 ? static_cast<char>(0x80) : 0);
  const auto* base = static_cast<const uint8_t*>(a.data) + m * a.stride + k0;
  auto row = [&](int r, int64_t g) {
    return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base + r * a.stride + 4 * g)), flip);
  };
  for (int64_t g = 0; g < vec; g += 4) {
    const __m128i r0 = row(0, g), r1 = row(1, g), r2 = row(2, g), r3 = row(3, g), r4 = row(4, g), r5 = row(5, g);
    const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);  // groups g, g + 1
    const __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);  // groups g + 2, g + 3
    const __m128i u = _mm_unpacklo_epi32(r4, r5), v = _mm_unpackhi_epi32(r4, r5);
    const __m128i first[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                              _mm_unpackhi_epi64(t2, t3)};
    const __m128i last[4] = {u, _mm_unpackhi_epi64(u, u), v, _mm_unpackhi_epi64(v, v)};
    for (int i = 0; i < 4; ++i) {
      int8_t* d = dst + (g + i) * 24;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), first[i]);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 16), last[i]);
    }
  }
  return vec;
#endif
}

}  // namespace

int64_t a_group_bytes(const MicroKernel& k) {
  switch (k.a) {
    case APacking::Pairs16: return int64_t{k.mr} * 2 * 2;
    case APacking::Quads8:
    case APacking::Split16:
    case APacking::TilesU8:
    case APacking::TilesS8: return int64_t{k.mr} * 4;
    case APacking::TilesSplit16: return int64_t{k.mr} * 8;
    case APacking::Quads8SignAbs: return int64_t{k.mr} * 8;
  }
  return 0;
}

namespace {
bool is_tiles(APacking p) { return p == APacking::TilesU8 || p == APacking::TilesS8 || p == APacking::TilesSplit16; }
constexpr int64_t kTileGroups = 16;  // k-groups per AMX tile row of 64 bytes
}  // namespace

int64_t a_panel_bytes(const MicroKernel& k, int64_t groups) {
  return (is_tiles(k.a) ? (groups + kTileGroups - 1) / kTileGroups * kTileGroups : groups) * a_group_bytes(k);
}

int64_t a_rows_per_tile(const MicroKernel& k) { return k.a == APacking::Split16 ? k.mr / 2 : k.mr; }

namespace {

// APacking::TilesU8 / TilesS8: per micro-panel of kern.mr rows, per block of 16 groups, each
// row's 64 bytes; rows and groups past A zero.
void pack_tiles(const MicroKernel& kern, const MatrixView& a, int64_t row0, int64_t rows, int64_t g0, int64_t groups,
                std::vector<int8_t>& out) {
  const int64_t mr = kern.mr, panel_bytes = a_panel_bytes(kern, groups), row_bytes = kTileGroups * 4;
  const int64_t panels = (rows + mr - 1) / mr;
  out.assign(static_cast<size_t>(panels * panel_bytes), 0);
  const int64_t k0 = g0 * 4, real = std::max<int64_t>(0, std::min(groups * 4, a.cols - k0));
  if (kern.a == APacking::TilesSplit16) {
    // Per block: the low-byte tile, then the high-byte tile (mr x 64 bytes each).
    const int64_t tile_bytes = mr * row_bytes;
#if defined(__x86_64__)
    const __m128i low_byte = _mm_set1_epi16(0xFF);
#endif
    for (int64_t r = 0; r < rows; ++r) {
      const auto* src = static_cast<const char*>(a.data) + ((row0 + r) * a.stride + k0) * 2;
      int8_t* panel = out.data() + (r / mr) * panel_bytes + (r % mr) * row_bytes;
      int64_t k = 0;
#if defined(__x86_64__)  // (the AMX layout; other architectures' builds take the loop after it)
      // 16 values at a time (never across a 64-byte tile row): low bytes by mask and unsigned
      // pack, high bytes by arithmetic shift and signed pack (exact: they are in [-128, 127]).
      for (; k + 16 <= real; k += 16) {
        const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * k));
        const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * k + 16));
        int8_t* at = panel + (k / row_bytes) * 2 * tile_bytes + k % row_bytes;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(at),
                         _mm_packus_epi16(_mm_and_si128(x0, low_byte), _mm_and_si128(x1, low_byte)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(at + tile_bytes),
                         _mm_packs_epi16(_mm_srai_epi16(x0, 8), _mm_srai_epi16(x1, 8)));
      }
#endif
      for (; k < real; ++k) {
        int16_t v;
        std::memcpy(&v, src + 2 * k, 2);
        int8_t* at = panel + (k / row_bytes) * 2 * tile_bytes + k % row_bytes;
        at[0] = static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint16_t>(v) & 0xFF));
        at[tile_bytes] = static_cast<int8_t>(v >> 8);  // arithmetic: the signed high byte
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const auto* src = static_cast<const int8_t*>(a.data) + (row0 + r) * a.stride + k0;
    int8_t* panel = out.data() + (r / mr) * panel_bytes + (r % mr) * row_bytes;
    for (int64_t k = 0; k < real; k += row_bytes)  // block k / 64 of the row
      std::memcpy(panel + (k / row_bytes) * mr * row_bytes, src + k, static_cast<size_t>(std::min(row_bytes, real - k)));
  }
}

}  // namespace

void pack_a(const MicroKernel& kern, const MatrixView& a, int64_t row0, int64_t rows, int64_t g0, int64_t groups,
            std::vector<int8_t>& out) {
  if (is_tiles(kern.a)) return pack_tiles(kern, a, row0, rows, g0, groups, out);
  const int64_t mr = a_rows_per_tile(kern);
  const int64_t group_bytes = a_group_bytes(kern), row_bytes = group_bytes / mr;
  const int64_t panels = (rows + mr - 1) / mr, panel_bytes = groups * group_bytes;
  const auto need = static_cast<size_t>(panels * panel_bytes);
  if (out.size() < need) out.resize(need);
  thread_local std::vector<int32_t> scratch_of_thread;
  auto& scratch = cpu::thread_address(scratch_of_thread);
  const bool six_bytes = kern.a == APacking::Quads8 && a.type != IntType::S16 && mr == 6;
  for (int64_t p = 0; p < panels; ++p) {
    int8_t* panel = out.data() + p * panel_bytes;
    // Whole panels of six 8-bit rows: their first groups four at a time, the rest per row.
    const int64_t done = six_bytes && p * mr + mr <= rows ? pack_six_rows_quads8(a, row0 + p * mr, g0, groups, panel) : 0;
    // Rows past the block stay unwritten: every kernel reads only the tile's real rows.
    for (int64_t r = 0; r < mr && p * mr + r < rows; ++r) {
      if (kern.a == APacking::Split16) {
        pack_split_row(a, row0 + p * mr + r, g0, groups, panel + r * row_bytes, group_bytes);
      } else if (done < groups) {
        pack_row(kern, a, row0 + p * mr + r, g0 + done, groups - done, panel + done * group_bytes + r * row_bytes,
                 group_bytes, scratch);
      }
    }
  }
}

}  // namespace fixq::gemm_detail
