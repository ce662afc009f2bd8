// The shared worker threads (thread_pool.h): a job is a counter of task indices that the
// caller and the woken workers claim one at a time under one mutex.
//
// Sleeping on a condition variable costs a wake-up of ~20-30 us on a VM (futex, then the
// scheduler), more than a mid-size product takes on one thread. So a worker that finished
// a job watches for the next one for a short while before it sleeps, and a caller whose
// share is done watches for the workers' last task before it sleeps: back-to-back jobs (a
// GRU's recurrent product every step) find the workers awake.
#include "cpu/thread_pool.h"

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace fixq::cpu_detail {

namespace {

// How long a thread watches for its condition before it sleeps, in microseconds.
std::atomic<int64_t> g_watch_us{200};

// Polls ready() (an atomic load) until it holds or the watch time has passed.
template <class Ready>
void spin_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(g_watch_us.load(std::memory_order_relaxed));
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return;
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();  // spin politely: frees the core's shared resources for a sibling thread
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return;
  }
}

class Pool {
 public:
  void run(int n, const std::function<void(int)>& task) {
    // One job at a time; a flag, not a mutex, since a task of this job may itself call.
    if (n <= 1 || busy_.exchange(true, std::memory_order_acquire)) {  // one task, or busy: here
      for (int i = 0; i < n; ++i) task(i);
      return;
    }
    struct Release {
      std::atomic<bool>& busy;
      ~Release() { busy.store(false, std::memory_order_release); }
    } release{busy_};
    {
      std::lock_guard<std::mutex> lock(m_);
      start_workers(n - 1);  // a new worker counts this job as new (incremented below)
      task_ = &task;
      next_ = 0;
      count_ = n;
      unfinished_ = n;
      error_ = nullptr;
      ++generation_;
    }
    // Only the helpers the job can use: each woken worker watches for ~200 us afterwards, and
    // more of them than cores would crowd out the caller.
    for (int i = 0; i < n - 1; ++i) wake_.notify_one();
    std::unique_lock<std::mutex> lock(m_);
    claim_and_run(lock);
    if (unfinished_.load(std::memory_order_relaxed) != 0) {
      lock.unlock();
      spin_until([this] { return unfinished_.load(std::memory_order_acquire) == 0; });
      lock.lock();
    }
    done_.wait(lock, [this] { return unfinished_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  bool watching(int n) const { return watching_.load(std::memory_order_relaxed) >= n; }

  // Starts n workers if they do not exist and has them watch for a job, without one.
  void wake(int n) {
    if (watching(n) || busy_.load(std::memory_order_relaxed)) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      start_workers(n);
      ++pokes_;
    }
    for (int i = 0; i < n; ++i) wake_.notify_one();
  }

  Pool* parent = nullptr;  // the pool of the process this one was forked from

 private:
  // Runs unclaimed tasks of the current job until none is left (lock held on entry and exit).
  void claim_and_run(std::unique_lock<std::mutex>& lock) {
    while (next_ < count_) {
      const int i = next_++;
      const std::function<void(int)>* task = task_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*task)(i);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !error_) error_ = error;
      if (--unfinished_ == 0) done_.notify_all();
    }
  }

  // Up to n workers (lock held). Fewer where the system refuses a thread: a job's caller
  // claims what is left.
  void start_workers(int n) {
    try {
      while (static_cast<int>(workers_.size()) < n) workers_.emplace_back([this, g = generation_.load()] { work(g); });
    } catch (const std::system_error&) {
    }
  }

  // A worker: watches, then sleeps, until a job newer than the last one it saw, then helps
  // with it. Woken without a job (wake), it watches again.
  void work(unsigned long seen) {
    std::unique_lock<std::mutex> lock(m_);
    unsigned long pokes = pokes_;
    for (;;) {
      if (generation_.load(std::memory_order_relaxed) == seen) {
        lock.unlock();
        watching_.fetch_add(1, std::memory_order_relaxed);
        spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        watching_.fetch_sub(1, std::memory_order_relaxed);
        lock.lock();
        wake_.wait(lock, [&] { return generation_ != seen || pokes_ != pokes; });
        pokes = pokes_;
        if (generation_ == seen) continue;
      }
      seen = generation_;
      claim_and_run(lock);
    }
  }

  std::atomic<bool> busy_{false};  // a job runs
  std::mutex m_;          // guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  int next_ = 0, count_ = 0;
  // Written under the mutex; atomic so that a spinning thread may watch them without it.
  std::atomic<int> unfinished_{0};
  std::atomic<unsigned long> generation_{0};
  std::atomic<int> watching_{0};  // workers in spin_until for the next job
  unsigned long pokes_ = 0;       // calls of wake()
  std::exception_ptr error_;
};

// Never destroyed: workers wait for work until the process exits, and no static destructor
// can run after the pool is gone while another one still multiplies.
std::atomic<Pool*> g_pool{nullptr};

// A forked child has none of the workers, and the pool's mutex may have been held by one
// of them at the fork: the child starts a pool of its own (the old one is left untouched).
void fresh_pool_in_child() {
  Pool* fresh = new Pool;
  fresh->parent = g_pool.load(std::memory_order_relaxed);  // still reachable: no leak report
  g_pool.store(fresh, std::memory_order_release);
}

Pool& pool() {
  static const bool once = [] {
    g_pool.store(new Pool, std::memory_order_release);
    pthread_atfork(nullptr, nullptr, fresh_pool_in_child);
    return true;
  }();
  (void)once;
  return *g_pool.load(std::memory_order_acquire);
}

}  // namespace

void parallel_for(int n, const std::function<void(int)>& task) { pool().run(n, task); }

bool workers_watching(int n) { return n <= 0 || pool().watching(n); }

void wake_workers(int n) {
  if (n > 0) pool().wake(n);
}

void set_watch_time(std::chrono::microseconds t) { g_watch_us.store(std::max<int64_t>(0, t.count()), std::memory_order_relaxed); }

}  // namespace fixq::cpu_detail
