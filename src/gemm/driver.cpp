// The blocked loops (BLIS / GotoBLAS order: k-blocks, row blocks, B panels, row groups)
// around the micro-kernels of kernels.h, and the raw gemm_s32 / gemm_s64 entry points.
#include "gemm/driver.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <type_traits>

#include "cpu/cache.h"
#include "cpu/thread_address.h"
#include "cpu/thread_pool.h"
#include "fixq/error.h"
#include "gemm/kernels.h"
#include "gemm/panels.h"

namespace fixq::gemm_detail {

namespace {

// A block of B's panel (kc groups x nr columns, MicroKernel::kc_bytes) stays in cache while
// every row group of the A block passes; the A block (up to kMc rows x kc groups) in L2.
constexpr int64_t kMc = 240;  // a multiple of every kernel's rows per tile (2, 3, 4, 6)

int64_t block_groups(const MicroKernel& k, IntType a, IntType b, bool whole_k_fits) {
  const int64_t cache = std::max<int64_t>(16, k.kc_bytes / (int64_t{k.b.nr} * k.b.kr * k.b.b_bytes));
  // Per-block int32 partial sums must not overflow when they are added into int64 later;
  // when the whole K fits in int32 every running sum does too. s16 A in byte planes sums
  // bytes in int32 (each plane's sum as 8-bit A's).
  const IntType summed = k.a == APacking::Split16 || k.a == APacking::TilesSplit16 ? IntType::U8 : a;
  return whole_k_fits ? cache : std::min(cache, max_block_groups(summed, b, k.b.kr));
}

// Products below this many multiply-adds stay on the calling thread while the shared
// workers sleep: waking them costs more (Zen 5 VM, wall time, one thread against two:
// 64 x 512 x 512 46 against 52 us, 100 x 768 x 256 54 against 55, 128 x 512 x 512 94
// against 80).
constexpr int64_t kThreadingThreshold = int64_t{1} << 25;
// Products from this many multiply-adds are shared when the workers are awake (a job
// finished moments ago, cpu/thread_pool.h), as in a GRU's time loop: handing a job to a
// watching worker costs ~2-3 us. Fewer than 4 rows count 4 / rows times their work: they
// stream the weights at a quarter of the multiply rate or less. Same VM, back-to-back
// calls, one thread against two: 16 x 256 x 768 9.4 against 8.3 us, 1 x 1024 x 1024 11.0
// against 6.4, 1 x 3072 x 1024 43.7 against 23.3; below: 16 x 256 x 256 3.0 against 3.8.
constexpr int64_t kAwakeThreadingThreshold = int64_t{3} << 20;

std::atomic<int> g_threads{0};

// Every k-block, row block and row group for B panels [p0, p1): the unit of work of one
// thread. Every output element is produced by exactly one thread, in the same order of
// k-blocks, whatever the split. Acc = int32_t: tiles go straight to C (the whole K fits in
// int32, so every running sum does); int64_t: each block's int32 tile is added into C.
template <class Acc>
void run_panels(const BoundProduct& pr, const MatrixView& a, int64_t p0, int64_t p1, Acc* c, int64_t ldc,
                bool b_from_l3, bool reverse_panels) {
  const MicroKernel& k = *pr.kern;
  const PackedPanels& panels = *pr.panels;
  const int64_t groups = panels.groups, nr = k.b.nr;
  const int64_t panel_group_bytes = nr * k.b.kr * k.b.b_bytes;
  const int64_t tile_rows = a_rows_per_tile(k);
  // Byte planes: the kernel combines its planes in int64 and writes C itself; only Split16
  // (high bytes plus 128) starts from -32768 * colsum.
  const bool split = k.a == APacking::Split16 || k.a == APacking::TilesSplit16;
  const bool split_start = k.a == APacking::Split16;
  thread_local std::vector<int8_t> apack_of_thread;
  auto& apack = cpu::thread_address(apack_of_thread);
  alignas(64) int32_t tile[kMaxTileRows * 64];  // the largest tile: 16 x 64 (AMX)
  if (tile_rows > kMaxTileRows)
    fail("internal: ", k.name, " has tiles of ", tile_rows, " rows; at most ", kMaxTileRows, " fit");
  if (k.begin != nullptr) k.begin();
  for (int64_t g0 = 0; g0 < groups; g0 += pr.kc) {
    const int64_t gc = std::min(pr.kc, groups - g0);
    const bool first = g0 == 0;
    for (int64_t m0 = 0; m0 < a.rows; m0 += kMc) {
      const int64_t m1 = std::min(a.rows, m0 + kMc);
      pack_a(k, a, m0, m1 - m0, g0, gc, apack);
      const int64_t a_panel = a_panel_bytes(k, gc);
      for (int64_t i = p0; i < p1; ++i) {
        const int64_t p = reverse_panels ? p0 + p1 - 1 - i : i;
        const int8_t* bp = panels.panel(p) + g0 * panel_group_bytes;
        const int64_t n0 = p * nr;
        const int cols = static_cast<int>(std::min(nr, pr.n - n0));
        for (int64_t r0 = m0; r0 < m1; r0 += tile_rows) {
          const int rows = static_cast<int>(std::min(tile_rows, m1 - r0));
          const int8_t* ap = apack.data() + ((r0 - m0) / tile_rows) * a_panel;
          if (split) {
            // The kernel combines its byte planes in int64 and writes C itself.
            TileArgs t{ap, bp, gc, rows, cols, nullptr, ldc, !first, nullptr};
            t.b_from_l3 = b_from_l3;
            if constexpr (std::is_same_v<Acc, int32_t>) {
              t.c = c + r0 * ldc + n0;  // the whole K fits: so does 32768 * |colsum|
              t.init = first && split_start ? panels.split_comp32.data() + n0 : nullptr;
            } else {
              t.c64 = c + r0 * ldc + n0;
              t.init64 = first && split_start ? panels.split_comp64.data() + n0 : nullptr;
            }
            k.run(t);
          } else if constexpr (std::is_same_v<Acc, int32_t>) {
            const int32_t* init = first && pr.shifted ? panels.shift_comp32.data() + n0 : nullptr;
            TileArgs t{ap, bp, gc, rows, cols, c + r0 * ldc + n0, ldc, !first, init};
            t.b_from_l3 = b_from_l3;
            k.run(t);
          } else {
            TileArgs t{ap, bp, gc, rows, cols, tile, nr, false, nullptr};
            t.b_from_l3 = b_from_l3;
            k.run(t);
            for (int r = 0; r < rows; ++r) {
              Acc* row = c + (r0 + r) * ldc + n0;
              const int32_t* t = tile + r * nr;
              if (first) {
                for (int j = 0; j < cols; ++j)
                  row[j] = t[j] + (pr.shifted ? panels.shift_comp64[static_cast<size_t>(n0 + j)] : 0);
              } else {
                for (int j = 0; j < cols; ++j) row[j] += t[j];
              }
            }
          }
        }
      }
    }
  }
}

int32_t a_value(const MatrixView& a, int64_t m, int64_t k) {
  const char* row = static_cast<const char*>(a.data) + m * a.stride * int_type_bytes(a.type);
  if (a.type == IntType::U8) return static_cast<uint8_t>(row[k]);
  return static_cast<int8_t>(row[k]);  // the sign trick serves s8 A only
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

BoundProduct bind(IntType a, const PackedB& b, int64_t rows) {
  BoundProduct p;
  p.kern = pick_kernel(a, b.type(), rows).kernel;
  p.panels = &b.store().panels(p.kern->b);
  p.a_type = a;
  p.b_type = b.type();
  p.n = b.n();
  p.k = b.k();
  p.whole_k_fits = fits_int32(a, b);
  p.kc = block_groups(*p.kern, a, b.type(), p.whole_k_fits);
  // s8 A arrives as a + 128: subtract 128 * colsum[n] (starting from it keeps every running
  // sum within K * 128 * 128, inside int32 whenever the whole product is).
  p.shifted = p.kern->a == APacking::Quads8 && a == IntType::S8;
  return p;
}

template <class Acc>
void accumulate(const BoundProduct& pr, const MatrixView& a, Acc* c, int64_t ldc, bool reverse_panels) {
  if constexpr (std::is_same_v<Acc, int32_t>) require(pr.whole_k_fits, "internal: int32 accumulators for sums that may not fit");
  const int64_t n_panels = pr.panels->panels;
  const int64_t work = a.rows * pr.n * pr.k;
  const int64_t cost = a.rows >= 4 ? work : work * (4 / std::max<int64_t>(a.rows, 1));
  const int64_t awake = pr.kern->awake_sharing_work > 0 ? pr.kern->awake_sharing_work : kAwakeThreadingThreshold;
  // Fewer than 4 rows stream the weights at memory speed. Weights within half of this core's
  // L2 stay there between calls (a GRU step's recurrent product), and sharing would move half
  // of them to the other core on every call: on the AMX Xeon of docs/performance.md an int8
  // forward at H = 512, batch 1 (1 x 1536 x 512 per step) took 9.4-10.4 us per step with two
  // GEMM threads against 7.4 with one. Larger weights come from L3, where two cores' bandwidth
  // pays (H = 1024: 31 against 85 us).
  const bool b_in_l2 = cpu::stays_in_l2(pr.n * pr.k * int_type_bytes(pr.b_type));
  reverse_panels = reverse_panels && (!b_in_l2 || pr.kern->reverse_within_l2);
  const bool l2_resident = a.rows < 4 && b_in_l2;
  int64_t threads = cost < awake || l2_resident ? 1 : std::min<int64_t>(gemm_threads(), n_panels);
  if (threads > 1 && work < kThreadingThreshold && !cpu_detail::workers_watching(static_cast<int>(threads) - 1)) {
    cpu_detail::wake_workers(static_cast<int>(threads) - 1);  // for the next product
    threads = 1;
  }
  if (threads <= 1) {
    run_panels(pr, a, 0, n_panels, c, ldc, !b_in_l2, reverse_panels);
  } else {
    // The shared workers (cpu/thread_pool.h) take the panel ranges; features and overrides
    // are per process, so every thread picks the same kernel.
    cpu_detail::parallel_for(static_cast<int>(threads), [&](int t) {
      const int64_t p0 = n_panels * t / threads, p1 = n_panels * (t + 1) / threads;
      run_panels(pr, a, p0, p1, c, ldc, !b_in_l2, reverse_panels);
    });
  }
  // The sign trick stored each -128 weight as -127: x * -128 = x * -127 - x.
  for (const auto& [n, k] : pr.panels->minus128)
    for (int64_t m = 0; m < a.rows; ++m) c[m * ldc + n] -= a_value(a, m, k);
}

template void accumulate<int32_t>(const BoundProduct&, const MatrixView&, int32_t*, int64_t, bool);
template void accumulate<int64_t>(const BoundProduct&, const MatrixView&, int64_t*, int64_t, bool);

std::string kernel_name(IntType a, IntType b, int64_t rows) { return pick_kernel(a, b, rows).kernel->name; }

int64_t rows_per_tile(IntType a, IntType b, int64_t rows) { return a_rows_per_tile(*pick_kernel(a, b, rows).kernel); }

}  // namespace fixq::gemm_detail

namespace fixq {

void set_gemm_threads(int n) {
  require(n >= 0, "set_gemm_threads: thread count ", n, " must be >= 0 (0 = automatic)");
  gemm_detail::g_threads.store(n, std::memory_order_relaxed);
}

int gemm_threads() {
  const int n = gemm_detail::g_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  if (const char* env = std::getenv("FIXQ_NUM_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    require(*end == '\0' && v >= 1 && v <= 1024, "FIXQ_NUM_THREADS='", env, "' must be a whole number in 1..1024");
    return static_cast<int>(v);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

void gemm_s32(const MatrixView& a, const PackedB& b, int32_t* c, int64_t ldc) {
  gemm_detail::validate(a, b);
  require(c != nullptr, "gemm_s32: null output pointer");
  require(ldc >= b.n(), "gemm_s32: output row stride ", ldc, " is smaller than a row of ", b.n());
  require(gemm_detail::fits_int32(a.type, b), "gemm_s32: activations up to ", gemm_detail::max_abs(a.type),
          " in magnitude times weights whose largest row sum of |B| is ", b.max_abs_row_sum(), " (K = ", b.k(),
          ") can overflow int32; use gemm_s64");
  gemm_detail::accumulate(a, b, c, ldc);
}

void gemm_s64(const MatrixView& a, const PackedB& b, int64_t* c, int64_t ldc) {
  gemm_detail::validate(a, b);
  require(c != nullptr, "gemm_s64: null output pointer");
  require(ldc >= b.n(), "gemm_s64: output row stride ", ldc, " is smaller than a row of ", b.n());
  gemm_detail::accumulate(a, b, c, ldc);
}

}  // namespace fixq
