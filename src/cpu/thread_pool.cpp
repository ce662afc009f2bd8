// The shared worker threads (thread_pool.h): a job is a counter of task indices that the
// caller and the woken workers claim one at a time under one mutex.
#include "cpu/thread_pool.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace fixq::cpu_detail {

namespace {

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
      // Fewer workers where the system refuses a thread: the caller claims what is left.
      try {
        // A new worker counts this job as new (its generation is incremented below).
        while (static_cast<int>(workers_.size()) < n - 1) workers_.emplace_back([this, g = generation_] { work(g); });
      } catch (const std::system_error&) {
      }
      task_ = &task;
      next_ = 0;
      count_ = n;
      unfinished_ = n;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::unique_lock<std::mutex> lock(m_);
    claim_and_run(lock);
    done_.wait(lock, [this] { return unfinished_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
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

  // A worker: sleeps until a job newer than the last one it saw, then helps with it.
  void work(unsigned long seen) {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      claim_and_run(lock);
    }
  }

  std::atomic<bool> busy_{false};  // a job runs
  std::mutex m_;          // guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  int next_ = 0, count_ = 0, unfinished_ = 0;
  unsigned long generation_ = 0;
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

}  // namespace fixq::cpu_detail
