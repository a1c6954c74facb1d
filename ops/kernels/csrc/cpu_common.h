// Helpers shared by the CPU translation units: threads, tables, template dispatch.
#pragma once

#if defined(__linux__)
#include <sched.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "cpu_level.h"
#include "dispatch.h"
#include "grid_sample_math.h"
#include "isa.h"
#include "thread_pool.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {

using sk::IC;
using sk::with_mode_pad;
using levels::Workers;

inline int default_threads() {
  if (const char* s = std::getenv("SURGEON_NUM_THREADS")) {
    const int n = std::atoi(s);
    if (n > 0) return n;
  }
#if defined(__linux__)  // the CPUs this process may run on (taskset, cgroups' cpusets)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? (int)n : 1;
}

// Below ~32k output values per thread, waking another thread costs more than it saves.
inline int resolve_threads(int requested, int64_t values) {
  const int n = requested > 0 ? requested : default_threads();
  return (int)std::max<int64_t>(1, std::min<int64_t>(n, values / 32768));
}

// fn(task) for every task in [0, n_tasks), on the workers' threads.
template <typename Fn>
void run_tasks(const Workers& w, int64_t n_tasks, const Fn& fn) {
  if (w.threads <= 1 || n_tasks <= 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t);
  } else if (w.pool != nullptr) {
    auto task = [](void* ctx, size_t t) { (*(const Fn*)ctx)((int64_t)t); };
    if (w.pool->parallel_for(w.pool->ctx, (size_t)n_tasks, task, (void*)&fn) != 0)
      throw std::runtime_error("the engine's thread pool failed");  // the ABI's guarded() catches it
  } else {
    pool_run(w.threads, n_tasks, [](const void* ctx, int64_t t) { (*(const Fn*)ctx)(t); }, &fn);
  }
}

// fn(first_row, end_row) over [0, rows), in about 8 tasks per thread for load balance.
template <typename Fn>
void parallel_rows(const Workers& w, int64_t rows, const Fn& fn) {
  const int64_t per = w.threads <= 1 ? rows : std::max<int64_t>(1, rows / (int64_t(w.threads) * 8));
  const int64_t tasks = (rows + per - 1) / per;
  run_tasks(w, tasks, [&](int64_t t) { fn(t * per, std::min(rows, (t + 1) * per)); });
}

inline std::vector<float> base_table(int64_t n, int align_corners) {
  std::vector<float> b((size_t)n);
  for (int64_t i = 0; i < n; ++i) b[(size_t)i] = base_coord(i, n, align_corners);
  return b;
}

template <typename T>
inline std::vector<float> to_floats(const T* p, int64_t n) {
  std::vector<float> v((size_t)n);
  for (int64_t i = 0; i < n; ++i) v[(size_t)i] = to_float(p[i]);
  return v;
}

// Whether the fast paths' int32 offsets reach every tap (and sizes minus coordinates, each
// within +-2^30, fit int32).
inline bool fits_int32(int64_t D, int64_t H, int64_t W) {
  const int64_t lim = int64_t(1) << 30;
  return D * H * W < 2 * lim && D < lim && H < lim && W < lim;
}

}  // namespace cpu
SK_ISA_END
}  // namespace sk
