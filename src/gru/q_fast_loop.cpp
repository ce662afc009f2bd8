// The time loop of the fast path: the same order of work as run_cell_reference
// (q_step_intonly.cpp): Wx for every step in one GEMM, then per step the recurrent GEMM of
// the whole batch and the vectorised unit update. Accumulators stay raw (int32 or int64)
// and are requantized by the family's lane kernels instead of the GEMM's scalar epilogue.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "gemm/driver.h"
#include "gru/q_fast.h"

namespace fixq::gru_detail {

namespace {

// Rows of Wx computed per GEMM call: the accumulators of one chunk stay a few MB.
constexpr int64_t kChunkRows = 256;

// v.size() >= n, never shrinking (new elements 0).
template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n, T{0});
}

struct Scratch {
  std::vector<int32_t> acc32;
  std::vector<int64_t> acc64;
};

// Raw accumulators of rows [r0, r0 + rows) of a (the GEMM's kernels: vpdpbusd on VNNI CPUs,
// the exact vpmaddubsw sign trick for int8 x int8 on AVX2).
template <class Acc>
void accumulate_rows(const MatrixView& a, int64_t r0, int64_t rows, const PackedB& b, Acc* acc, int64_t ldc) {
  const auto elem = static_cast<int64_t>(int_type_bytes(a.type));
  const char* first = static_cast<const char*>(a.data) + r0 * a.stride * elem;
  gemm_detail::accumulate(MatrixView{a.type, first, rows, a.cols, a.stride}, b, acc, ldc);
}

void requantized_product(const GruLaneKernels& k, const MatrixView& a, const PackedB& b, bool acc64,
                         const RequantRows& r, int64_t H, int64_t hp, int32_t* out, Scratch& scratch) {
  const int64_t ldc = 3 * H + kLanePadding;
  const int64_t chunk = std::min(a.rows, kChunkRows);
  // Padding columns (never written by the GEMM) feed only ignored lanes.
  std::vector<int32_t>& acc32 = scratch.acc32;
  std::vector<int64_t>& acc64v = scratch.acc64;
  const auto need = static_cast<size_t>(chunk * ldc);
  if (acc64 && acc64v.size() < need) acc64v.resize(need, 0);
  if (!acc64 && acc32.size() < need) acc32.resize(need, 0);
  for (int64_t r0 = 0; r0 < a.rows; r0 += chunk) {
    const int64_t rows = std::min(chunk, a.rows - r0);
    if (acc64) accumulate_rows(a, r0, rows, b, acc64v.data(), ldc);
    else accumulate_rows(a, r0, rows, b, acc32.data(), ldc);
    for (int64_t i = 0; i < rows; ++i) {
      int32_t* dst = out + (r0 + i) * 3 * hp;
      if (acc64) k.requant_rows_s64(r, H, hp, acc64v.data() + i * ldc, dst);
      else k.requant_rows_s32(r, H, hp, acc32.data() + i * ldc, dst);
    }
  }
}

}  // namespace

void run_cell_fast(const GruLaneKernels& k, const CellPlan& p, const FastPlan& f, const void* q_x, int64_t steps,
                   int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y) {
  const int64_t H = p.hidden_size, C = p.input_size, hp = f.hp;
  // Buffers are kept per thread between calls: fresh multi-megabyte allocations would cost
  // page faults on every forward (a streaming step calls this once per frame).
  thread_local Scratch scratch;
  thread_local std::vector<int32_t> wx;
  grow(wx, static_cast<size_t>(steps * batch * 3 * hp));
  if (steps * batch > 0)
    requantized_product(k, MatrixView{p.x.storage, q_x, steps * batch, C, C}, p.w, f.acc64_x, f.wx, H, hp, wx.data(),
                        scratch);
  thread_local std::vector<int32_t> rh, h32, hn;
  grow(rh, static_cast<size_t>(batch * 3 * hp));
  grow(h32, static_cast<size_t>(batch * hp));  // lanes past H feed only ignored units
  grow(hn, static_cast<size_t>(batch * hp));
  auto length = [&](int64_t b) { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; };
  const int64_t hbytes = int_type_bytes(p.h.storage);

  for (int64_t i = 0; i < steps; ++i) {
    requantized_product(k, MatrixView{p.h.storage, q_h, batch, H, H}, p.r, f.acc64_h, f.rh, H, hp, rh.data(), scratch);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;  // padding: not computed, output untouched
      const int64_t t = reverse ? len - 1 - i : i;
      int32_t* hb = h32.data() + b * hp;
      k.widen(static_cast<const char*>(q_h) + b * H * hbytes, p.h.storage, H, hb);
      k.update_units(p, f, wx.data() + (t * batch + b) * 3 * hp, rh.data() + b * 3 * hp, hb, hn.data() + b * hp);
      k.narrow(hn.data() + b * hp, H, p.h.storage, static_cast<char*>(q_y) + (t * batch + b) * H * hbytes);
    }
    // Commit the new states only after the whole batch read the old ones (Rh used them).
    for (int64_t b = 0; b < batch; ++b) {
      if (i >= length(b)) continue;
      k.narrow(hn.data() + b * hp, H, p.h.storage, static_cast<char*>(q_h) + b * H * hbytes);
    }
  }
}

}  // namespace fixq::gru_detail
