// The blocked loops (GotoBLAS order: k-blocks, row blocks, B panels, row groups) and the
// raw gemm_s32 / gemm_s64 entry points.
#include "gemm/driver.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

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

namespace {

// Products below this many multiply-adds stay on the calling thread: spawning costs more.
constexpr int64_t kThreadingThreshold = int64_t{1} << 22;

std::atomic<int> g_threads{0};

// All k-blocks, row blocks and row groups for B panels [p0, p1): the unit of work of one
// thread. Every output element is produced by exactly one call, in the same order of
// k-blocks, whatever the split.
template <class Acc>
void accumulate_panels(const MatrixView& a, const PackedB& b, const std::vector<int32_t>& apack, int64_t p0,
                       int64_t p1, Acc* c, int64_t ldc) {
  const TileKernel kernel = tile_kernel_for(active_isa());
  const int64_t kpairs = b.k_pairs(), kc = block_pairs(a.type, b.type());
  const int64_t bytes_per_b = b.type() == IntType::S16 ? 2 : 1;
  int32_t tile[kMaxMr * kNr];
  for (int64_t kp0 = 0; kp0 < kpairs; kp0 += kc) {
    const int64_t kcur = std::min(kc, kpairs - kp0);
    for (int64_t m0 = 0; m0 < a.rows; m0 += kMc) {
      const int64_t m1 = std::min(a.rows, m0 + kMc);
      for (int64_t p = p0; p < p1; ++p) {
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

}  // namespace

template <class Acc>
void accumulate(const MatrixView& a, const PackedB& b, Acc* c, int64_t ldc) {
  const std::vector<int32_t> apack = pack_a(a, b.k_pairs());
  const int64_t panels = b.panels();
  const int64_t work = a.rows * b.n() * b.k();
  const int64_t threads = work < kThreadingThreshold ? 1 : std::min<int64_t>(gemm_threads(), panels);
  if (threads <= 1) {
    accumulate_panels(a, b, apack, 0, panels, c, ldc);
    return;
  }
  // The active instruction set is a per-process setting, so every worker sees the same.
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t p0 = panels * t / threads, p1 = panels * (t + 1) / threads;
    pool.emplace_back([&, p0, p1] {
      try {
        accumulate_panels(a, b, apack, p0, p1, c, ldc);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        error = std::current_exception();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

template void accumulate<int32_t>(const MatrixView&, const PackedB&, int32_t*, int64_t);
template void accumulate<int64_t>(const MatrixView&, const PackedB&, int64_t*, int64_t);

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
