// The CUDA kernels on the stream onnxruntime's CUDA provider gives this node: queued, not
// waited for.  Pointers are device memory; the sizes were read on the host.
#include "ort_ops.h"
#include "surgeon_kernels.h"

namespace sk_ort {
namespace {

constexpr int kNoStream = SURGEON_ERR_INTERNAL;

void* stream_of(const OrtApi* api, OrtKernelContext* ctx, int* rc) {
  void* stream = nullptr;
  if (OrtStatus* s = api->KernelContext_GetGPUComputeStream(ctx, &stream)) {
    api->ReleaseStatus(s);
    *rc = kNoStream;
  }
  return stream;
}

int sample(const OrtApi* api, OrtKernelContext* ctx, const Call& c, const Attrs& a, const void* x,
           const void* theta, void* y) {
  int rc = SURGEON_OK;
  void* stream = stream_of(api, ctx, &rc);
  if (rc != SURGEON_OK) return rc;
  return surgeon_fused_grid_sample_cuda(c.dtype, c.spatial_dims, x, theta, y, c.N, c.C, c.in, c.out, c.N, a.mode,
                                        a.padding, a.align_corners, stream);
}

int grid(const OrtApi* api, OrtKernelContext* ctx, const Call& c, const Attrs& a, const void* theta, void* g) {
  int rc = SURGEON_OK;
  void* stream = stream_of(api, ctx, &rc);
  if (rc != SURGEON_OK) return rc;
  return surgeon_affine_grid_cuda(c.dtype, c.spatial_dims, theta, g, c.N, c.out, a.align_corners, stream);
}

}  // namespace

const Launcher kCudaLauncher = {sample, grid, surgeon_cuda_error_string};

}  // namespace sk_ort
