// The CPU kernels' persistent thread pool (thread_pool.cpp), one per library.
//
// Why not OpenMP: the library is loaded next to torch and onnxruntime, which bring their own
// OpenMP runtimes; a second libgomp in one process is a known source of trouble.  Why
// persistent: spawning a thread costs tens of microseconds, a large share of a 0.5 ms call.
// Compiled once, for the baseline, and outside the per-level namespaces (isa.h): every level
// shares this one pool.
#pragma once

#include <stdint.h>

namespace sk {

using TaskThunk = void (*)(const void* ctx, int64_t task);

// Calls thunk(ctx, t) for every task t in [0, n_tasks) on up to n_threads threads, the caller's
// included; returns when all are done.  A call made while the pool is busy (another caller
// thread) runs on the caller alone instead of waiting.
void pool_run(int n_threads, int64_t n_tasks, TaskThunk thunk, const void* ctx);

}  // namespace sk
