#include "gru/float/weights.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "cpu/aligned_vector.h"
#include "cpu/thread_address.h"

namespace fixq::gru_float {

namespace {

// The thread's copies, used as a stack: views are made and destroyed in nested scopes.
struct Pool {
  std::deque<cpu::AlignedVector<float>> buffers;  // a deque: growing it moves no buffer
  std::size_t depth = 0;
};
thread_local Pool pool_of_thread;

}  // namespace

AlignedWeights::AlignedWeights(std::span<const float> v, int64_t rows) : data_(v.data()) {
  if (rows < kMinRows || reinterpret_cast<std::uintptr_t>(v.data()) % 64 == 0) return;
  Pool& pool = cpu::thread_address(pool_of_thread);
  if (pool.depth == pool.buffers.size()) pool.buffers.emplace_back();
  cpu::AlignedVector<float>& buf = pool.buffers[pool.depth++];
  buf.resize(v.size());  // capacity is kept: no new pages after the first call of this size
  std::copy(v.begin(), v.end(), buf.begin());
  data_ = buf.data();
  copied_ = true;
}

AlignedWeights::~AlignedWeights() {
  if (copied_) --cpu::thread_address(pool_of_thread).depth;
}

}  // namespace fixq::gru_float
