// The time loop of the fast path: the same order of work as run_cell_reference
// (gru/int/step_intonly.cpp) for each step: Wx (project_inputs, one GEMM for a block of
// steps; both directions of a bidirectional layer in one product that reads x once), then
// the recurrent GEMM of the whole batch and, per batch item, the family's step kernel
// (requantization of Rh and the vectorised unit update). Everything that does not change from
// step to step (the GEMMs' kernels and panels, the lane constants) is looked up or prepared
// once. The weights' panel order alternates from product to product (gemm/driver.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "cpu/thread_address.h"
#include "cpu/thread_pool.h"
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
// The recurrent products' own: one step of a call of one step computes Rh before Wx
// (run_cell_fast), and Wx's product must not overwrite it.
thread_local cpu::AlignedVector<int32_t> rh32_of_thread;
thread_local cpu::AlignedVector<int64_t> rh64_of_thread;

// The panel order (gemm/driver.h) of the last weight product this thread ran for a cell:
// each call starts in the other order, so that it first reads what the last one read last,
// still in L2 (a call of one step, a streamed frame, as much as the steps of one
// call). Only the speed depends on it. A few cells per thread, by a hash of their address:
// a cell that loses its slot starts first to last.
struct LastOrder {
  const CellPlan* plan = nullptr;
  bool reversed = false;
};
thread_local std::array<LastOrder, 8> last_order_of_thread;

LastOrder& last_order(const CellPlan& p) {
  auto& memo = cpu::thread_address(last_order_of_thread);
  const uint64_t h = (reinterpret_cast<uintptr_t>(&p) >> 4) * 0x9E3779B97F4A7C15ull;
  return memo[static_cast<size_t>(h >> 61)];
}

bool starts_reversed(const CellPlan& p) {
  const LastOrder& o = last_order(p);
  return o.plan == &p && !o.reversed;
}

void remember_order(const CellPlan& p, bool reversed) { last_order(p) = {&p, reversed}; }

// After steps [0, steps) that began in order first_reversed and alternated (run_steps): the
// order of the last one.
void remember_last_step(const CellPlan& p, bool first_reversed, int64_t steps) {
  if (steps > 0) remember_order(p, first_reversed != (((steps - 1) & 1) != 0));
}

// The recurrent accumulators of the whole batch, Rh = h R^T, rows of ldc.
struct RecurrentProduct {
  const CellPlan& p;
  const FastPlan& f;
  int64_t batch, ldc;
  gemm_detail::BoundProduct rhp;
  int32_t* acc32 = nullptr;
  int64_t* acc64 = nullptr;

  RecurrentProduct(const CellPlan& plan, const FastPlan& fast, int64_t b)
      : p(plan), f(fast), batch(b), ldc(3 * plan.hidden_size + kLanePadding), rhp(gemm_detail::bind(plan.h.storage, plan.r, b)) {
    const auto n = static_cast<size_t>(batch * ldc);
    if (f.acc64_h) {
      auto& v = cpu::thread_address(rh64_of_thread);
      grow(v, n);
      acc64 = v.data();
    } else {
      auto& v = cpu::thread_address(rh32_of_thread);
      grow(v, n);
      acc32 = v.data();
    }
  }
  void run(const void* q_h, bool reverse_panels) const {
    const MatrixView hv{p.h.storage, q_h, batch, p.hidden_size, p.hidden_size};
    if (f.acc64_h) gemm_detail::accumulate(rhp, hv, acc64, ldc, reverse_panels);
    else gemm_detail::accumulate(rhp, hv, acc32, ldc, reverse_panels);
  }
};

// Step i of the time loop after its recurrent product: every running item's unit update,
// then the new states committed (only after the whole batch read the old ones: Rh used
// them). Item b's Wx at time t is row (t - t_lo) * batch + b of wx.
void update_batch(const GruLaneKernels& k, const void* state, const RecurrentProduct& rh, const int16_t* wx,
                  int64_t t_lo, int64_t i, int64_t steps, const std::vector<int64_t>& lengths, bool reverse, char* h,
                  char* y) {
  const CellPlan& p = rh.p;
  const int64_t H = p.hidden_size, hp = rh.f.hp, batch = rh.batch;
  const int64_t hbytes = int_type_bytes(p.h.storage);
  auto length = [&](int64_t b) { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; };
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = length(b);
    if (i >= len) continue;  // padding: not computed, output untouched
    const int64_t t = reverse ? len - 1 - i : i;
    const int16_t* wx_row = wx + ((t - t_lo) * batch + b) * 3 * hp;
    char* y_row = y + (t * batch + b) * H * hbytes;
    if (rh.f.acc64_h) k.step_s64(state, rh.acc64 + b * rh.ldc, wx_row, h + b * H * hbytes, y_row);
    else k.step_s32(state, rh.acc32 + b * rh.ldc, wx_row, h + b * H * hbytes, y_row);
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = length(b);
    if (i >= len) continue;
    const int64_t t = reverse ? len - 1 - i : i;
    std::memcpy(h + b * H * hbytes, y + (t * batch + b) * H * hbytes, static_cast<size_t>(H * hbytes));
  }
}

// Steps [i0, i1) of the time loop (run_recurrence's contract), Wx as update_batch reads it.
// Step i's recurrent product reads R's panels last to first where first_reversed differs
// from i's parity: the order alternates from step to step.
void run_steps(const GruLaneKernels& k, const void* state, const RecurrentProduct& rh, const int16_t* wx, int64_t t_lo,
               int64_t i0, int64_t i1, int64_t steps, const std::vector<int64_t>& lengths, bool reverse, void* q_h,
               void* q_y, bool first_reversed) {
  for (int64_t i = i0; i < i1; ++i) {
    rh.run(q_h, first_reversed != ((i & 1) != 0));
    update_batch(k, state, rh, wx, t_lo, i, steps, lengths, reverse, static_cast<char*>(q_h), static_cast<char*>(q_y));
  }
}

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
                    const void* q_x, int64_t rows, WxRows* const* out, bool reverse_panels) {
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
    if (f0.acc64_x) gemm_detail::accumulate(wxp, a, acc64.data(), ldc, reverse_panels);
    else gemm_detail::accumulate(wxp, a, acc32.data(), ldc, reverse_panels);
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
  const void* state = p.prepared.get(k, p, f);
  const RecurrentProduct rh(p, f, batch);
  const bool first_reversed = starts_reversed(p);
  run_steps(k, state, rh, wx.data(), 0, 0, steps, steps, lengths, reverse, q_h, q_y, first_reversed);
  remember_last_step(p, first_reversed, steps);
}

void run_cell_fast(const GruLaneKernels& k, const CellPlan& p, const FastPlan& f, const void* q_x, int64_t steps,
                   int64_t batch, const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y,
                   bool pipelined) {
  thread_local WxRows wx_of_thread, wx_next_of_thread;
  auto& wx = cpu::thread_address(wx_of_thread);
  const CellPlan* cells[] = {&p};
  WxRows* out[] = {&wx};
  const void* state = p.prepared.get(k, p, f);
  const bool first_reversed = starts_reversed(p);
  if (steps == 1 && first_reversed) {
    // One step (a streamed frame) after one that read W then R first to last: R's product
    // first and then W's, both last to first, so that each starts on what the last call
    // read last. Where W and R outgrow L2 (W + R are 6 MiB at H = 1024, 1.5 MiB at
    // H = 512 against 1 MiB of L2 on a Zen 4 or 5 core), what L2 still holds is read from
    // there instead of L3. The next call reads W then R first to last again.
    const RecurrentProduct rh(p, f, batch);
    rh.run(q_h, true);
    project_inputs(k, cells, 1, p.w, q_x, batch, out, true);
    update_batch(k, state, rh, wx.data(), 0, 0, 1, lengths, reverse, static_cast<char*>(q_h), static_cast<char*>(q_y));
    remember_order(p, true);
    return;
  }
  // Wx of a block of steps, then those steps: the block's Wx rows are read back from L2
  // rather than from a whole sequence's (2.4 MiB at H = 256, batch 16, T = 100) written
  // out to L3 and read back. A block is about one GEMM chunk of rows (project_inputs).
  // The reverse direction of items of their own lengths reads a different time per item at
  // each step, so its Wx is computed whole first.
  const RecurrentProduct rh(p, f, batch);
  const int64_t C = p.input_size, xbytes = int_type_bytes(p.x.storage);
  const int64_t ldc_x = 3 * p.hidden_size + kLanePadding;
  const int64_t block = reverse && !lengths.empty()
                            ? steps
                            : std::max<int64_t>(1, chunk_rows(ldc_x, f.acc64_x ? 8 : 4) / std::max<int64_t>(batch, 1));
  // The block of steps [s0, s1) and its times [t_lo, t_lo + s1 - s0).
  auto bounds = [&](int64_t s0) {
    const int64_t s1 = std::min(steps, s0 + block);
    return std::pair{s1, reverse ? steps - s1 : s0};
  };
  auto project = [&](int64_t s0, WxRows& into) {
    const auto [s1, t_lo] = bounds(s0);
    WxRows* to[] = {&into};
    project_inputs(k, cells, 1, p.w, static_cast<const char*>(q_x) + t_lo * batch * C * xbytes, (s1 - s0) * batch, to);
  };
  auto recur = [&](int64_t s0, const WxRows& from) {
    const auto [s1, t_lo] = bounds(s0);
    run_steps(k, state, rh, from.data(), t_lo, s0, s1, steps, lengths, reverse, q_h, q_y, first_reversed);
  };
  if (pipelined && block < steps) {
    // Two threads: while one runs block i's recurrence from one Wx buffer, the other projects
    // block i + 1 into the other (where batch slices would leave the GEMM's tiles part
    // empty: gru/int/forward.cpp). Each block's Wx is complete before its steps start, so the
    // integers are those of one thread.
    WxRows* buffer[2] = {&wx, &cpu::thread_address(wx_next_of_thread)};
    project(0, *buffer[0]);
    for (int64_t s0 = 0, i = 0; s0 < steps; s0 += block, ++i) {
      const int64_t next = s0 + block;
      cpu_detail::parallel_for(next < steps ? 2 : 1, [&](int task) {
        if (task == 0) recur(s0, *buffer[i & 1]);
        else project(next, *buffer[(i + 1) & 1]);
      });
    }
  } else {
    for (int64_t s0 = 0; s0 < steps; s0 += block) {
      project(s0, wx);
      recur(s0, wx);
    }
  }
  remember_last_step(p, first_reversed, steps);
}

}  // namespace fixq::gru_detail
