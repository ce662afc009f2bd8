// Private: the worker threads that multi-threaded kernels share (the GEMM's panel ranges,
// a bidirectional GRU layer's two directions).
//
// Threads are started once, on first need, and then wait for work: a product used to start
// its threads on every call, which cost more than a mid-size product itself (64 x 256 x 256
// on two threads: 181 us against 12 us on one; thread creation and the fresh pages of each
// new thread's packing buffers). Workers keep their thread_local buffers between jobs.
#pragma once

#include <functional>

namespace fixq::cpu_detail {

// Runs task(i) for every i in [0, n), the calling thread taking part, and returns when all
// are done; rethrows the first exception a task threw (after every task finished). At most
// n - 1 workers join in. One job runs at a time: a call made while another job runs (from
// another thread, or from inside a task) runs its tasks on the calling thread, in order.
// Callers must not depend on which thread runs which i. A forked child starts workers of
// its own (the parent's do not exist there).
void parallel_for(int n, const std::function<void(int)>& task);

}  // namespace fixq::cpu_detail
