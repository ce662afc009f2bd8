#include "gru/float/weights.h"

#include <cstddef>
#include <deque>

#include "cpu/thread_address.h"
#include "fixq/error.h"

namespace fixq::gru_float {

namespace {

// The thread's packed copies, used as a stack: views are made and destroyed in nested scopes.
struct Pool {
  std::deque<cpu::AlignedVector<float>> buffers;  // a deque: growing it moves no buffer
  std::size_t depth = 0;
};
thread_local Pool pool_of_thread;

}  // namespace

void pack_weights(PackFn pack, std::span<const float> w, int64_t n, int64_t k, cpu::AlignedVector<float>& into) {
  if (static_cast<int64_t>(w.size()) != n * k) fail("float GRU: ", w.size(), " weights for a [", n, ", ", k, "] matrix");
  into.resize(static_cast<std::size_t>(packed_size(n, k)));  // capacity is kept: no new pages after the first call
  pack(w.data(), n, k, into.data());
}

PackedWeights::PackedWeights(PackFn pack, std::span<const float> w, int64_t n, int64_t k) {
  Pool& pool = cpu::thread_address(pool_of_thread);
  if (pool.depth == pool.buffers.size()) pool.buffers.emplace_back();
  cpu::AlignedVector<float>& buf = pool.buffers[pool.depth];
  pack_weights(pack, w, n, k, buf);
  ++pool.depth;  // only once nothing can throw: the destructor gives it back
  data_ = buf.data();
}

PackedWeights::~PackedWeights() { --cpu::thread_address(pool_of_thread).depth; }

PackedModel::PackedModel(const GruModel& model, const ActiveKernels& k) : kernels(k) {
  w.resize(model.cells.size());
  r.resize(model.cells.size());
  for (std::size_t c = 0; c < model.cells.size(); ++c) {
    const GruCell& cell = model.cells[c];
    const int64_t H3 = 3 * cell.hidden_size;
    pack_weights(k.pack, cell.W, H3, cell.input_size, w[c]);
    pack_weights(k.pack, cell.R, H3, cell.hidden_size, r[c]);
    cells.push_back({w[c].data(), r[c].data()});
  }
}

}  // namespace fixq::gru_float
