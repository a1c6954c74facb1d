// A small persistent thread pool for the CPU kernels.
//
// Why not OpenMP: the library is loaded next to torch and onnxruntime, which bring their own
// OpenMP runtimes; a second libgomp in one process is a known source of trouble.  Why
// persistent: spawning a thread costs tens of microseconds, a large share of a 0.5 ms call.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace sk {

class ThreadPool {
 public:
  // Calls fn(task) for every task in [0, n_tasks) on up to n_threads threads, the caller's
  // included; returns when all are done.  A call made while the pool is busy (another
  // caller thread) runs on the caller alone instead of waiting.
  template <typename Fn>
  static void run(int n_threads, int64_t n_tasks, const Fn& fn) {
    if (n_threads > n_tasks) n_threads = (int)n_tasks;
    if (n_threads <= 1) {
      for (int64_t t = 0; t < n_tasks; ++t) fn(t);
      return;
    }
    ThreadPool& pool = instance();
    std::unique_lock<std::mutex> busy(pool.run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {
      for (int64_t t = 0; t < n_tasks; ++t) fn(t);
      return;
    }
    pool.dispatch(n_threads, n_tasks, [](const void* ctx, int64_t t) { (*(const Fn*)ctx)(t); }, &fn);
  }

 private:
  using Thunk = void (*)(const void*, int64_t);

  // One pool per process; a forked child (no worker threads there) gets a fresh one.  The
  // old object is leaked on purpose: its mutexes may be held by threads that do not exist.
  static ThreadPool& instance() {
    static std::mutex create_mutex;
    static ThreadPool* pool = nullptr;
    std::lock_guard<std::mutex> lock(create_mutex);
    if (pool == nullptr || pool->pid_ != getpid()) pool = new ThreadPool();
    return *pool;
  }

  ThreadPool() : pid_(getpid()) {}

  void dispatch(int n_threads, int64_t n_tasks, Thunk thunk, const void* ctx) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while ((int)workers_.size() < n_threads - 1) {
        // Detached: they sleep on the condition variable until the process exits.  If the
        // system refuses a thread, the caller does the work with fewer helpers.
        try {
          std::thread(&ThreadPool::worker_loop, this).detach();
        } catch (...) {
          break;
        }
        workers_.push_back(1);
      }
      thunk_ = thunk;
      ctx_ = ctx;
      n_tasks_ = n_tasks;
      next_.store(0);
      wanted_ = std::min(n_threads - 1, (int)workers_.size());
      running_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    // Workers that have not picked the job up yet are told to skip it.
    wanted_ = 0;
    done_.wait(lock, [this] { return running_ == 0; });
  }

  void work() {
    for (int64_t t = next_.fetch_add(1); t < n_tasks_; t = next_.fetch_add(1)) thunk_(ctx_, t);
  }

  void worker_loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (wanted_ <= 0) continue;
      --wanted_;
      ++running_;
      lock.unlock();
      work();
      lock.lock();
      if (--running_ == 0) done_.notify_all();
    }
  }

  const pid_t pid_;
  std::mutex run_mutex_;  // one job at a time
  std::mutex mutex_;      // guards the job fields and the counters below
  std::condition_variable wake_, done_;
  std::vector<char> workers_;
  uint64_t generation_ = 0;
  int wanted_ = 0, running_ = 0;
  Thunk thunk_ = nullptr;
  const void* ctx_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_{0};
};

}  // namespace sk
