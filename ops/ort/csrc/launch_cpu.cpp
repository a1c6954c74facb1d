// The CPU kernels on onnxruntime's own intra-op threads (KernelContext_ParallelFor): a session
// set to one thread runs them on one, and the library never adds threads of its own.
#include "ort_ops.h"
#include "surgeon_kernels.h"

namespace sk_ort {
namespace {

struct OrtPool {
  const OrtApi* api;
  OrtKernelContext* ctx;
};

int parallel_for(void* pool, size_t n_tasks, void (*task)(void*, size_t), void* task_ctx) {
  const OrtPool& p = *static_cast<const OrtPool*>(pool);
  if (OrtStatus* s = p.api->KernelContext_ParallelFor(p.ctx, task, n_tasks, 0, task_ctx)) {
    p.api->ReleaseStatus(s);
    return 1;
  }
  return 0;
}

// threads 0: the pool's size is unknown; it only decides how finely the work is cut.
int sample(const OrtApi* api, OrtKernelContext* ctx, const Call& c, const Attrs& a, const void* x,
           const void* theta, void* y) {
  OrtPool pool{api, ctx};
  const surgeon_cpu_executor executor{parallel_for, &pool, 0};
  return surgeon_fused_grid_sample_cpu_ex(c.dtype, c.spatial_dims, x, theta, y, c.N, c.C, c.in, c.out, c.N, a.mode,
                                          a.padding, a.align_corners, &executor);
}

int grid(const OrtApi* api, OrtKernelContext* ctx, const Call& c, const Attrs& a, const void* theta, void* g) {
  OrtPool pool{api, ctx};
  const surgeon_cpu_executor executor{parallel_for, &pool, 0};
  return surgeon_affine_grid_cpu_ex(c.dtype, c.spatial_dims, theta, g, c.N, c.out, a.align_corners, &executor);
}

}  // namespace

const Launcher kCpuLauncher = {sample, grid, surgeon_kernels_error_string};

}  // namespace sk_ort
