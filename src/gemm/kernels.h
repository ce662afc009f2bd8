// Private: the GEMM's micro-kernels, the packed layouts they read, and the kernel table of
// each instruction-set family.
//
// The product is blocked in the BLIS manner (driver.cpp): B is packed once into panels of
// nr columns; per call, blocks of A are packed into micro-panels of mr rows; a micro-kernel
// computes an mr x nr tile of int32 sums over a block of k-groups. A k-group is the kr
// consecutive k that one multiply-add instruction consumes per lane: kr = 4 bytes for
// vpdpbusd / vpmaddubsw, kr = 2 int16 for vpmaddwd / vpdpwssd.
//
// Every micro-kernel of every family computes the same exact integers (int32 partial sums
// whose bound the driver keeps below 2^31), so every path returns the same results.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/aligned_vector.h"
#include "cpu/registry.h"
#include "fixq/gemm.h"

namespace fixq::gemm_detail {

// How B is stored in a panel: for each k-group g, for each of the nr columns j, kr weights
// B[n0 + j, g * kr + i] (i < kr), each b_bytes wide. K is padded to whole groups and N to
// whole panels with zeros. With minus128_as_127 (the sign trick, below), an int8 weight of
// -128 is stored as -127 and listed in PackedPanels::minus128 for a correction.
struct PanelFormat {
  int kr = 2;
  int b_bytes = 1;
  int nr = 16;
  bool minus128_as_127 = false;
  friend bool operator==(const PanelFormat&, const PanelFormat&) = default;
};

// How a micro-panel of A is stored: for each k-group g, for each of the mr rows r, the
// group's kr values of row r (k past K is 0). Rows past the block are not written: a
// kernel reads only the tile's real rows (TileArgs::rows).
enum class APacking : uint8_t {
  Pairs16,       // int16 values (u8, s8 or s16 A): vpmaddwd / vpdpwssd pairs
  Quads8,        // uint8 values: u8 A as is, s8 A plus 128 (the driver subtracts 128 * colsum[n])
  Quads8SignAbs, // per row 8 bytes: the 4 int8 values of A, then their absolute values
  // s16 A as two uint8 planes for vpdpbusd: each row fills two of the mr slots, its 4 low
  // bytes (u8) and then its 4 high bytes plus 128 (s8 shifted to u8). A tile then covers
  // mr / 2 rows, and a = 256 * (high + 128) + low - 32768 makes every product exact in
  // 8-bit multiplies: the kernel combines the two int32 plane sums in int64, and the driver
  // starts each column at -32768 * colsum[n] (PackedPanels::split_comp64).
  Split16,
  // AMX tiles (kernels_amx.cpp): per block of 16 k-groups, the 16 rows of the tile, each
  // row's 64 bytes (its 16 groups) together, as tileloadd reads a 16 x 64 byte A tile. Rows
  // and groups past A are 0 (the kernel multiplies whole tiles). The values as they are:
  // u8 A for tdpbusd, s8 A for tdpbssd.
  TilesU8,
  TilesS8,
  // s16 A for AMX as two tiles per block of 16 k-groups: its low bytes (u8, for tdpbusd)
  // and then its high bytes (s8 as they are, for tdpbssd), each laid out as TilesU8; a =
  // 256 * high + low exactly, so no start values. The kernel combines the two int32 plane
  // sums in int64, as Split16 does.
  TilesSplit16,
};

// B packed in one format, with what the kernels need besides the panels.
struct PackedPanels {
  PanelFormat format;
  int64_t panels = 0;                  // ceil(N / nr)
  int64_t groups = 0;                  // ceil(K / kr)
  // panels * groups * nr * kr * b_bytes bytes (and zeros after them), from a 64-byte boundary: every panel and
  // group row of the vector kernels starts on a cache line, so no 64-byte load of B is split
  // (std::vector's storage of a large block starts 16 bytes past one).
  cpu::AlignedVector<int8_t> data;
  std::vector<std::pair<int32_t, int32_t>> minus128;  // (n, k) of the -128 weights (sign trick)
  // -128 * colsum[n], which a product with s8 A shifted to u8 (APacking::Quads8) starts
  // from; the int32 copy only where every entry fits.
  std::vector<int64_t> shift_comp64;
  std::vector<int32_t> shift_comp32;
  // -32768 * colsum[n], the start of a product with s16 A in byte planes (APacking::Split16).
  std::vector<int64_t> split_comp64;
  std::vector<int32_t> split_comp32;

  const int8_t* panel(int64_t p) const {
    return data.data() + p * groups * format.nr * format.kr * format.b_bytes;
  }
};

// One micro-kernel call: the sums of `groups` k-groups for an mr x nr tile.
struct TileArgs {
  const void* a;        // A micro-panel, at the block's first group
  const void* b;        // B panel, at the block's first group
  int64_t groups;       // k-groups to sum
  int rows;             // rows of the tile that are real (1..mr)
  int cols;             // columns of the tile that are real (1..nr)
  int32_t* c;           // tile [rows][cols], row stride ldc
  int64_t ldc;
  bool accumulate;      // c += sums; else c = init[j] + sums (init may be null: 0)
  const int32_t* init;  // per column of the tile
  // Split16 kernels only: rows counts A's rows (2 * rows packed slots), and with c64 set
  // the tile is written as int64 to c64 (row stride ldc, init from init64) instead of c.
  int64_t* c64 = nullptr;
  const int64_t* init64 = nullptr;
  // B comes from beyond this core's L2 (the driver's judgement: the whole B is more than
  // half of it). The one-row kernels then fetch it ahead themselves; from L2 the hardware
  // keeps up and the fetches only take load slots.
  bool b_from_l3 = true;
};

struct MicroKernel {
  const char* name;     // what it is: family, instruction, operand types, tile
  int mr;               // packed rows per tile (A rows: mr, or mr / 2 for Split16)
  APacking a;
  PanelFormat b;
  void (*run)(const TileArgs&);
  // Bytes of a B panel per k-block: the slice every row group of an A block reuses. Small
  // enough for L1 when the kernel reads B from L1 (AVX2), up to L2 when it prefetches B
  // itself and fewer passes over C pay more (AVX-512: one pass for K up to 2048).
  int64_t kc_bytes;
  // Run once per product on each thread before its first tile (null: nothing to do). The
  // AMX kernels configure the tiles here: a configuration per tile drained the tile
  // pipeline and took more time than the tile's arithmetic.
  void (*begin)() = nullptr;
  // Multiply-adds from which a product is shared with workers that are awake (0: the
  // driver's default, driver.cpp). The AMX kernels run a GRU step's products so fast that
  // the handoff and the other core's share of C cost more than they save below 2^25: on the
  // AMX Xeon of docs/performance.md an int8 forward at H = 256, batch 16 took 35 us per step
  // with two GEMM threads against 15 with one, at H = 512 61-66 against 40-41.
  int64_t awake_sharing_work = 0;
  // Whether the alternating panel order of a product repeated with the same weights
  // (accumulate's reverse_panels) is used while they stay in L2, where it only changes what
  // L1 keeps from one call to the next (beyond L2 every kernel follows it). On the Intel Xeon
  // of docs/performance.md, an int8 GRU at batch 1: the AVX-512 kernels 8-15% faster at
  // H = 128 (R, 48 KiB, then stays in L1) and ~2% at H = 256. The AVX2 kernels showed no
  // gain: their builds differed by 2-5% either way, and a build that never reversed ran as
  // slow as one that did, so those differences followed code layout, not the order.
  bool reverse_within_l2 = false;
};

// The kernels of one family, one per operand pair (A type x B type). S16 x S16 is not
// supported (one pair of products can reach 2^31).
struct GemmKernels {
  const MicroKernel* u8s8;
  const MicroKernel* s8s8;
  const MicroKernel* s16s8;
  const MicroKernel* x8s16;  // u8 or s8 A, s16 B
  // For products of at least kManyRows rows (null: those take the kernels above).
  const MicroKernel* u8s8_many = nullptr;
  const MicroKernel* s8s8_many = nullptr;
  const MicroKernel* s16s8_many = nullptr;
};
// The AMX kernels' 16-row tiles pay from 8 rows: on the AMX Xeon of docs/performance.md,
// one thread, s8 x s8 8 x 768 x 256 2.5 us against 4.6 for the AVX-512 6 x 64 kernel, 12
// rows 2.9 against 6.2, 8 x 3072 x 1024 (weights from L3) 113 against 124; below 8 rows the
// weights streamed from L3 favour the AVX-512 kernels (4 x 3072 x 1024 109 against 96).
inline constexpr int64_t kManyRows = 8;
// The most rows of any kernel's tile (AMX: 16).
inline constexpr int64_t kMaxTileRows = 16;

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(GemmKernels, kGemm)
// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<GemmKernels>& registry();

// The micro-kernel the active features select for these operand types and a product of
// `rows` rows of A (0: unknown, taken as few).
cpu_detail::Picked<const MicroKernel*> pick_kernel(IntType a, IntType b, int64_t rows = 0);
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (registry.cpp).
std::vector<KernelChoice> report_kernels();


// The scalar micro-kernel: any format, the reference every family's kernels must match.
void tile_scalar(const MicroKernel& layout, const TileArgs& t);

// Packs rows [row0, row0 + rows) and k-groups [g0, g0 + groups) of A into micro-panels of
// the kernel's mr rows (the last one padded), one after another.
void pack_a(const MicroKernel& k, const MatrixView& a, int64_t row0, int64_t rows, int64_t g0, int64_t groups,
            std::vector<int8_t>& out);
// Bytes of one packed A micro-panel per k-group, and of a micro-panel of `groups` groups
// (the tile layouts pad the groups to whole blocks of 16).
int64_t a_group_bytes(const MicroKernel& k);
int64_t a_panel_bytes(const MicroKernel& k, int64_t groups);
// A's rows per tile: mr, or mr / 2 where each row takes two slots (Split16).
int64_t a_rows_per_tile(const MicroKernel& k);

// The largest number of k-groups whose int32 partial sums cannot overflow for these types
// and kr.
int64_t max_block_groups(IntType a, IntType b, int kr);
// Whether every accumulator of A's type times these weights fits int32: max|A| * max_n
// sum_k |B[n, k]| <= 2^31 - 1. Every running sum a kernel forms is bounded by the same
// product: the partial sum over the k done so far, minus max|A|-shifted column sums of the
// k still to come where A is shifted (s8 to u8, s16's high bytes), disjoint sets of k.
bool fits_int32(IntType a, const PackedB& b);
int64_t max_abs(IntType t);

}  // namespace fixq::gemm_detail
