// A host stand-in for the few CUDA runtime pieces csrc/cuda_kernels.cu uses, so g++ can
// compile that file unchanged (with -DSURGEON_CUDA_ON_HOST) and run its kernels on the CPU:
// on_host::run walks every block and thread of a launch in turn, setting blockIdx, threadIdx,
// gridDim and blockDim as the GPU would.  The kernels use no shared memory or barriers, so
// running threads one after another gives what the GPU gives.  Tests only.
#pragma once

#include <stdint.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

static thread_local uint3 blockIdx, threadIdx;
static thread_local dim3 gridDim, blockDim;

typedef void* cudaStream_t;
typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorInvalidConfiguration = 9;

namespace on_host {
// A launch the GPU would refuse (a block of over 1024 threads, a grid y or z extent over
// 65535) records the error cudaGetLastError then reports, and runs nothing.
inline thread_local cudaError_t last_error = cudaSuccess;
// Counts of threads run, for the tests' checks on the launch shape.
inline thread_local int64_t threads_run = 0, launches = 0;

template <typename F>
void run(dim3 grid, dim3 block, const F& body) {
  ++launches;
  if ((int64_t)block.x * block.y * block.z > 1024 || grid.y > 65535 || grid.z > 65535 || grid.x == 0 ||
      grid.y == 0) {
    last_error = cudaErrorInvalidConfiguration;
    return;
  }
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              blockIdx = {bx, by, bz};
              threadIdx = {tx, ty, tz};
              body();
              ++threads_run;
            }
}
}  // namespace on_host

inline cudaError_t cudaGetLastError() {
  const cudaError_t err = on_host::last_error;
  on_host::last_error = cudaSuccess;
  return err;
}

inline const char* cudaGetErrorString(cudaError_t err) {
  return err == cudaSuccess ? "no error" : err == cudaErrorInvalidConfiguration ? "invalid configuration argument"
                                                                               : "unknown error";
}

// Counters for the tests, by C ABI.
extern "C" __attribute__((visibility("default"))) int64_t surgeon_on_host_threads_run(void) {
  return on_host::threads_run;
}
extern "C" __attribute__((visibility("default"))) int64_t surgeon_on_host_launches(void) {
  return on_host::launches;
}
