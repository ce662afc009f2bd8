// Private: the worker threads that multi-threaded kernels share (the GEMM's panel ranges,
// a bidirectional GRU layer's two directions).
//
// Threads are started once, on first need, and then wait for work: a product used to start
// its threads on every call, which cost more than a mid-size product itself (64 x 256 x 256
// on two threads: 181 us against 12 us on one; thread creation and the fresh pages of each
// new thread's packing buffers). Workers keep their thread_local buffers between jobs.
#pragma once

#include <chrono>
#include <functional>

namespace fixq::cpu_detail {

// Runs task(i) for every i in [0, n), the calling thread taking part, and returns when all
// are done; rethrows the first exception a task threw (after every task finished). At most
// n - 1 workers join in. One job runs at a time: a call made while another job runs (from
// another thread, or from inside a task) runs its tasks on the calling thread, in order.
// Callers must not depend on which thread runs which i. A forked child starts workers of
// its own (the parent's do not exist there).
void parallel_for(int n, const std::function<void(int)>& task);

// Whether n workers are awake, watching for a job (one finished a job less than ~200 us
// ago), so that a job for n + 1 threads would start at once instead of after a wake-up. A
// hint for whether a small job is worth sharing: the answer may change at any moment, and
// results must not depend on it.
bool workers_watching(int n);

// Has n workers (started if need be) watch for a job for the next ~200 us, without giving
// them one: a caller that runs a small job alone now, because they slept, finds them awake
// for the next one.
void wake_workers(int n);

// How long a worker watches for the next job, and a caller for the last task of its job,
// before sleeping (200 us unless set; negative counts as 0). The tests lengthen it: on a
// busy machine a worker may not get a core within 200 us.
void set_watch_time(std::chrono::microseconds t);

}  // namespace fixq::cpu_detail
