// The time loop of the fast path: the same order of work as run_cell_reference
// (gru/int/step_intonly.cpp): Wx for every step in one GEMM (project_inputs; both directions of
// a bidirectional layer in one product that reads x once), then per step the recurrent
// GEMM of the whole batch and, per batch item, the family's step kernel (requantization of
// Rh and the vectorised unit update). Everything that does not change from step to step
// (the GEMMs' kernels and panels, the lane constants) is looked up or prepared once.
#include <algorithm>
#include <cstring>
#include <new>

#include "cpu/thread_address.h"
#include "fixq/error.h"
#include "gemm/driver.h"
#include "gru/int/fast/loop.h"

namespace fixq::gru_detail {

namespace {

// Rows of Wx computed per GEMM call: enough that the weights are read once for many rows
// (at least 96: 16 row tiles), few enough that the chunk's accumulators stay near 320 KB,
// in L2 on every current core (Zen 5 has 1 MB), where the requantization after the product
// reads them. Against 256-row chunks (800 KB of int32 at H = 256) on an Intel Xeon with 2 MB
// of L2: batch 16 at H = 256 and 512 4-5% faster, batch 1 and H = 1024 within noise. A
// multiple of 6, the AVX-512 tile's rows.
constexpr int64_t kChunkBytes = 320 * 1024;
int64_t chunk_rows(int64_t ldc, int64_t acc_bytes) {
  return std::clamp<int64_t>(kChunkBytes / (ldc * acc_bytes), 96, 256) / 6 * 6;
}

// v.size() >= n, never shrinking (new elements 0).
template <class T, class Alloc>
void grow(std::vector<T, Alloc>& v, size_t n) {
  if (v.size() < n) v.resize(n, T{0});
}

// Buffers are kept per thread between calls: fresh multi-megabyte allocations would cost
// page faults on every forward (a streaming step calls this once per frame).
// 64-byte aligned: rows of 3H + kLanePadding accumulators then start on a cache line
// whenever H is a multiple of 16, so neither the GEMM's tile stores nor the step kernel's
// vector loads straddle two lines.
thread_local cpu::AlignedVector<int32_t> acc32_of_thread;
thread_local cpu::AlignedVector<int64_t> acc64_of_thread;

}  // namespace

PreparedLaneStates& PreparedLaneStates::operator=(const PreparedLaneStates&) {
  std::lock_guard lock(mutex_);
  for (Slot& s : slots_) {
    s.kernels.store(nullptr, std::memory_order_relaxed);
    s.state = nullptr;
    s.storage.reset();
  }
  return *this;
}

const void* PreparedLaneStates::get(const GruLaneKernels& k, const CellPlan& plan, const FastPlan& fast) const {
  // Slots fill in order and are never emptied while the plan is in use: the first empty
  // one ends the search.
  for (const Slot& s : slots_) {
    const GruLaneKernels* owner = s.kernels.load(std::memory_order_acquire);
    if (owner == &k) return s.state;
    if (owner == nullptr) break;
  }
  std::lock_guard lock(mutex_);
  for (Slot& s : slots_) {
    const GruLaneKernels* owner = s.kernels.load(std::memory_order_relaxed);
    if (owner == &k) return s.state;
    if (owner != nullptr) continue;
    s.storage = std::make_unique<unsigned char[]>(k.state_bytes + 63);
    const auto at = reinterpret_cast<uintptr_t>(s.storage.get());
    void* state = s.storage.get() + (64 - at % 64) % 64;
    k.prepare(plan, fast, state);
    s.state = state;
    s.kernels.store(&k, std::memory_order_release);
    return state;
  }
  fail("internal: more families of GRU lane kernels than a plan keeps states for");
}

void project_inputs(const GruLaneKernels& k, const CellPlan* const* cells, int count, const PackedB& w,
                    const void* q_x, int64_t rows, WxRows* const* out) {
  auto& acc32 = cpu::thread_address(acc32_of_thread);  // once: not recomputed in the loops
  auto& acc64 = cpu::thread_address(acc64_of_thread);
  const CellPlan& p0 = *cells[0];
  const FastPlan& f0 = *p0.fast;
  const int64_t H3 = 3 * p0.hidden_size, C = p0.input_size, hp = f0.hp;
  // Accumulator rows: count * 3H columns plus padding that only ignored lanes read.
  const int64_t ldc = count * H3 + kLanePadding;
  const void* states[2] = {};
  require(count >= 1 && count <= 2, "internal: project_inputs takes one or two cells, got ", count);
  for (int c = 0; c < count; ++c) {
    states[c] = cells[c]->prepared.get(k, *cells[c], *cells[c]->fast);
    grow(*out[c], static_cast<size_t>(rows * 3 * hp));
  }
  if (rows <= 0) return;
  const int64_t chunk = std::min<int64_t>(rows, chunk_rows(ldc, f0.acc64_x ? 8 : 4));
  const gemm_detail::BoundProduct wxp = gemm_detail::bind(p0.x.storage, w, chunk);
  const int64_t xbytes = int_type_bytes(p0.x.storage);
  if (f0.acc64_x) grow(acc64, static_cast<size_t>(chunk * ldc));
  else grow(acc32, static_cast<size_t>(chunk * ldc));
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t n = std::min(chunk, rows - r0);
    const MatrixView a{p0.x.storage, static_cast<const char*>(q_x) + r0 * C * xbytes, n, C, C};
    if (f0.acc64_x) gemm_detail::accumulate(wxp, a, acc64.data(), ldc);
    else gemm_detail::accumulate(wxp, a, acc32.data(), ldc);
    for (int c = 0; c < count; ++c) {
      const void* state = states[c];
      for (int64_t i = 0; i < n; ++i) {
        int16_t* row = out[c]->data() + (r0 + i) * 3 * hp;
        if (f0.acc64_x) k.requant_wx_s64(state, acc64.data() + i * ldc + c * H3, row);
        else k.requant_wx_s32(state, acc32.data() + i * ldc + c * H3, row);
      }
    }
  }
}

void run_recurrence(const GruLaneKernels& k, const CellPlan& p, const FastPlan& f, const WxRows& wx, int64_t steps,
                    int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y) {
  auto& acc32 = cpu::thread_address(acc32_of_thread);  // once: not recomputed in the loops
  auto& acc64 = cpu::thread_address(acc64_of_thread);
  const int64_t H = p.hidden_size, hp = f.hp;
  const int64_t ldc = 3 * H + kLanePadding;
  const void* state = p.prepared.get(k, p, f);
  const gemm_detail::BoundProduct rhp = gemm_detail::bind(p.h.storage, p.r, batch);
  if (f.acc64_h) grow(acc64, static_cast<size_t>(batch * ldc));
  else grow(acc32, static_cast<size_t>(batch * ldc));
  auto length = [&](int64_t b) { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; };
  const int64_t hbytes = int_type_bytes(p.h.storage);
  auto* h = static_cast<char*>(q_h);
  auto* y = static_cast<char*>(q_y);
  for (int64_t i = 0; i < steps; ++i) {
    const MatrixView hv{p.h.storage, q_h, batch, H, H};
    // R's panels in alternating order (gemm/driver.h): each step starts on those the last
    // one read last.
    const bool reverse_panels = (i & 1) != 0;
    if (f.acc64_h) gemm_detail::accumulate(rhp, hv, acc64.data(), ldc, reverse_panels);
    else gemm_detail::accumulate(rhp, hv, acc32.data(), ldc, reverse_panels);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;  // padding: not computed, output untouched
      const int64_t t = reverse ? len - 1 - i : i;
      const int16_t* wx_row = wx.data() + (t * batch + b) * 3 * hp;
      char* y_row = y + (t * batch + b) * H * hbytes;
      if (f.acc64_h) k.step_s64(state, acc64.data() + b * ldc, wx_row, h + b * H * hbytes, y_row);
      else k.step_s32(state, acc32.data() + b * ldc, wx_row, h + b * H * hbytes, y_row);
    }
    // Commit the new states only after the whole batch read the old ones (Rh used them).
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;
      const int64_t t = reverse ? len - 1 - i : i;
      std::memcpy(h + b * H * hbytes, y + (t * batch + b) * H * hbytes, static_cast<size_t>(H * hbytes));
    }
  }
}

void run_cell_fast(const GruLaneKernels& k, const CellPlan& p, const FastPlan& f, const void* q_x, int64_t steps,
                   int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y) {
  thread_local WxRows wx_of_thread;
  auto& wx = cpu::thread_address(wx_of_thread);
  const CellPlan* cells[] = {&p};
  WxRows* out[] = {&wx};
  project_inputs(k, cells, 1, p.w, q_x, steps * batch, out);
  run_recurrence(k, p, f, wx, steps, batch, lengths, reverse, q_h, q_y);
}

}  // namespace fixq::gru_detail
