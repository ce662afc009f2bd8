// The shared worker threads (src/cpu/thread_pool.h): every task runs exactly once, the
// first exception comes back after all tasks finished, calls that meet a running job (from
// a task, or from another thread) run on their own thread instead of waiting, and workers
// watch for the next job for a while after one, then sleep, and still take jobs after.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/thread_pool.h"

namespace fixq {
namespace {

using cpu_detail::parallel_for;
using cpu_detail::wake_workers;
using cpu_detail::workers_watching;

// Two tasks that wait for each other: true when two threads ran them. The first task
// waits until the second has started, which only another thread can do while the first
// runs: so the answer does not depend on how fast a worker gets a core. The wait is bounded
// only so that a pool that never hands the second task out fails instead of hanging (a
// worker kept off the cores for a minute is a broken pool, not a slow machine).
bool ran_on_two_threads() {
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  parallel_for(2, [&](int) {
    arrived.fetch_add(1);
    while (arrived.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    const std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  return ids.size() == 2;
}

TEST(ThreadPool, RunsEveryTaskOnceForManyJobs) {
  for (int n : {0, 1, 2, 3, 8, 17}) {
    for (int job = 0; job < 50; ++job) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      parallel_for(n, [&](int i) { runs[static_cast<size_t>(i)].fetch_add(1); });
      for (int i = 0; i < n; ++i) ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "n " << n << " task " << i;
    }
  }
}

TEST(ThreadPool, UsesOtherThreadsAndTheCaller) { EXPECT_TRUE(ran_on_two_threads()); }

TEST(ThreadPool, RethrowsAfterEveryTaskFinished) {
  std::atomic<int> finished{0};
  EXPECT_THROW(parallel_for(6,
                            [&](int i) {
                              if (i == 2) throw std::runtime_error("task 2");
                              finished.fetch_add(1);
                            }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 5);
  // The pool still works after a failed job.
  std::atomic<int> again{0};
  parallel_for(4, [&](int) { again.fetch_add(1); });
  EXPECT_EQ(again.load(), 4);
}

TEST(ThreadPool, NestedAndConcurrentCallsRunInline) {
  std::atomic<int> inner{0};
  parallel_for(2, [&](int) { parallel_for(3, [&](int) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 6);
  // Jobs from two user threads at once: one may run on the pool, the other inline.
  std::atomic<int> total{0};
  auto many = [&] {
    for (int j = 0; j < 200; ++j) parallel_for(4, [&](int) { total.fetch_add(1); });
  };
  std::thread other(many);
  many();
  other.join();
  EXPECT_EQ(total.load(), 2 * 200 * 4);
}

// A worker that finished its task watches for the next job, then sleeps, and a new job
// still wakes it. The watch is lengthened to 100 ms here: the scheduler may keep the worker
// off a core for a while (it may queue it behind this thread), and a 200 us watch could end
// before this thread looks.
TEST(ThreadPool, WorkersWatchAfterAJobThenSleepAndStillTakeJobs) {
  using namespace std::chrono_literals;
  struct Restore {
    ~Restore() { cpu_detail::set_watch_time(200us); }
  } restore;
  cpu_detail::set_watch_time(100ms);
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(ran_on_two_threads());
    bool seen = false;
    for (const auto until = std::chrono::steady_clock::now() + 50ms; !seen && std::chrono::steady_clock::now() < until;) {
      seen = workers_watching(1);
      std::this_thread::yield();
    }
    EXPECT_TRUE(seen) << "round " << round;
    std::this_thread::sleep_for(250ms);  // past the watch: asleep
    EXPECT_FALSE(workers_watching(1)) << "round " << round;
  }
  EXPECT_TRUE(ran_on_two_threads());
}

// wake_workers starts and wakes workers without a job: nothing runs, later jobs run every
// task once (right away, and after the workers went back to sleep), and a call from inside
// a task returns at once.
TEST(ThreadPool, WakingWithoutAJobRunsNothing) {
  wake_workers(0);
  wake_workers(-1);
  for (int round = 0; round < 2; ++round) {
    wake_workers(5);
    if (round == 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::atomic<int>> runs(6);
    parallel_for(6, [&](int i) {
      wake_workers(5);
      runs[static_cast<size_t>(i)].fetch_add(1);
    });
    for (int i = 0; i < 6; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "round " << round << " task " << i;
  }
  EXPECT_TRUE(ran_on_two_threads());
}

// A forked child has none of the parent's workers (and the pool's mutex may have been held
// by one at the fork): it gets a pool of its own, whose jobs run on two threads again,
// while another thread of the parent keeps the pool busy across the fork.
TEST(ThreadPool, ForkedChildGetsWorkersOfItsOwn) {
  ASSERT_TRUE(ran_on_two_threads());  // the parent's pool has its worker
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load()) parallel_for(2, [](int) {});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20);  // a hang fails the test instead of stalling it
    const bool two = ran_on_two_threads();  // first: a job of two needs no new worker
    std::atomic<int> count{0};
    for (int job = 0; job < 100; ++job) parallel_for(3, [&](int) { count.fetch_add(1); });
    _exit(two && count.load() == 300 ? 0 : 1);
  }
  stop.store(true);
  busy.join();
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "child status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace fixq
