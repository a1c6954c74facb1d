// The CPU kernels' thread pool (see thread_pool.h).
//
// Hand-over without system calls where it can: a worker spins for kSpinMicros after a job
// before it sleeps, so back-to-back calls find it awake; the caller wakes sleepers only, and
// spins (then yields) until the workers are done.  Measured on a 2-vCPU KVM guest, the
// futex wake-up and join of the condition variables cost 33 + 42 us of a 0.46 ms call.
#include "thread_pool.h"

#if defined(_WIN32)
#include <process.h>
#else
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sk {
namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

long long current_pid() {
#if defined(_WIN32)
  return _getpid();
#else
  return getpid();
#endif
}

class ThreadPool {
 public:
  using Thunk = TaskThunk;

  static void run(int n_threads, int64_t n_tasks, Thunk thunk, const void* ctx) {
    if (n_threads > n_tasks) n_threads = (int)n_tasks;
    if (n_threads <= 1) {
      for (int64_t t = 0; t < n_tasks; ++t) thunk(ctx, t);
      return;
    }
    ThreadPool& pool = instance();
    std::unique_lock<std::mutex> busy(pool.run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {
      for (int64_t t = 0; t < n_tasks; ++t) thunk(ctx, t);
      return;
    }
    pool.dispatch(n_threads, n_tasks, thunk, ctx);
  }

 private:
  static constexpr int kMaxThreads = 64;       // ranges; more threads share them
  static constexpr int64_t kSpinMicros = 200;  // a worker's wait for the next job, awake

  // One pool per process; a forked child (no worker threads there) gets a fresh one.  The
  // old object is leaked on purpose: its mutexes may be held by threads that do not exist.
  static ThreadPool& instance() {
    static std::mutex create_mutex;
    static ThreadPool* pool = nullptr;
    std::lock_guard<std::mutex> lock(create_mutex);
    if (pool == nullptr || pool->pid_ != current_pid()) pool = new ThreadPool();
    return *pool;
  }

  ThreadPool() : pid_(current_pid()) {}

  // Each participant starts on a contiguous range of tasks (neighbouring tiles share input
  // rows, which one thread then reads once) and, when done, helps with the others'.
  struct alignas(64) Range {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };

  void dispatch(int n_threads, int64_t n_tasks, Thunk thunk, const void* ctx) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (n_workers_ < n_threads - 1) {
        // Detached: they wait for jobs until the process exits.  If the system refuses a
        // thread, the caller does the work with fewer helpers.
        try {
          std::thread(&ThreadPool::worker_loop, this).detach();
        } catch (...) {
          break;
        }
        ++n_workers_;
      }
    }
    const int parts = std::min({n_threads, n_workers_ + 1, kMaxThreads});
    thunk_ = thunk;
    ctx_ = ctx;
    parts_ = parts;
    for (int k = 0; k < parts; ++k) {
      ranges_[k].next.store(n_tasks * k / parts, std::memory_order_relaxed);
      ranges_[k].end = n_tasks * (k + 1) / parts;
    }
    next_part_.store(1, std::memory_order_relaxed);
    wanted_.store(parts - 1);
    generation_.fetch_add(1);  // publishes the job (seq_cst: pairs with sleepers_ below)
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);  // a sleeper is then waiting or will see the job
      wake_.notify_all();
    }
    work(0);
    // Workers that have not picked the job up yet are told to skip it; then wait for the rest.
    wanted_.store(0);
    for (int spins = 0; running_.load() != 0; ++spins) {
      if (spins < 4096) cpu_relax();
      else std::this_thread::yield();
    }
  }

  void work(int part) {
    for (int k = 0; k < parts_; ++k) {  // own range first, then the others'
      Range& r = ranges_[(part + k) % parts_];
      for (int64_t t = r.next.fetch_add(1); t < r.end; t = r.next.fetch_add(1)) thunk_(ctx_, t);
    }
  }

  // Waits for a generation other than seen: spinning first, then asleep.
  uint64_t wait_job(uint64_t seen) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + std::chrono::microseconds(kSpinMicros);
    for (int i = 0;; ++i) {
      const uint64_t g = generation_.load();
      if (g != seen) return g;
      cpu_relax();
      if ((i & 63) == 63 && clock::now() > until) break;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return generation_.load() != seen; });
    sleepers_.fetch_sub(1);
    return generation_.load();
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      seen = wait_job(seen);
      running_.fetch_add(1);  // before the claim, so the caller cannot miss a running worker
      if (wanted_.fetch_sub(1) > 0) work(next_part_.fetch_add(1) % parts_);
      running_.fetch_sub(1);
    }
  }

  const long long pid_;
  std::mutex run_mutex_;  // one job at a time
  std::mutex mutex_;      // thread creation; sleeping workers' condition
  std::condition_variable wake_;
  int n_workers_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> wanted_{0}, running_{0}, sleepers_{0}, next_part_{0};
  Thunk thunk_ = nullptr;
  const void* ctx_ = nullptr;
  int parts_ = 1;
  Range ranges_[kMaxThreads];
};

}  // namespace

void pool_run(int n_threads, int64_t n_tasks, TaskThunk thunk, const void* ctx) {
  ThreadPool::run(n_threads, n_tasks, thunk, ctx);
}

}  // namespace sk
