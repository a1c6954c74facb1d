// CUDA launchers of the C ABI in surgeon_kernels.h.
//
// One thread per output location, running locations.h (its coordinate from theta or an
// explicit grid, then the shared per-pixel math of grid_sample_math.h over all channels).
// Blocks are 32 columns x 8 rows so a warp writes 32 consecutive outputs of a channel; rows
// past the grid's y extent are covered by a grid-stride loop.
//
// Built with -fmad=false: the shared math must not be contracted differently from the CPU.
#include <cuda_runtime.h>

#include "abi_checks.h"
#include "dispatch.h"
#include "grid_sample_math.h"
#include "locations.h"
#include "surgeon_kernels.h"

namespace sk {
namespace gpu {

constexpr int kBlockX = 32, kBlockY = 8;
constexpr int64_t kMaxGridY = 65535;

// This thread's first output row r (over N x Do x Ho) and its column j; false when the
// column lies past the output's width.  Rows then advance by the grid's y extent.
__device__ __forceinline__ bool first_row(const Dims& d, int64_t& r, int64_t& j) {
  j = (int64_t)blockIdx.x * kBlockX + threadIdx.x;
  r = (int64_t)blockIdx.y * kBlockY + threadIdx.y;
  return j < d.Wo;
}
__device__ __forceinline__ int64_t row_stride() { return (int64_t)gridDim.y * kBlockY; }

template <int MODE, int PAD, bool kFromTheta, typename T>
__global__ void sample_2d_kernel(const T* __restrict__ x, const T* __restrict__ coords, T* __restrict__ y,
                                 Dims d) {
  int64_t r, j;
  if (!first_row(d, r, j)) return;
  for (const int64_t rows = d.N * d.Ho; r < rows; r += row_stride())
    sample_location_2d<MODE, PAD, kFromTheta>(x, coords, y, d, r, j);
}

template <int MODE, int PAD, bool kFromTheta, typename T>
__global__ void sample_3d_kernel(const T* __restrict__ x, const T* __restrict__ coords, T* __restrict__ y,
                                 Dims d) {
  int64_t r, j;
  if (!first_row(d, r, j)) return;
  for (const int64_t rows = d.N * d.Do * d.Ho; r < rows; r += row_stride())
    sample_location_3d<MODE, PAD, kFromTheta>(x, coords, y, d, r, j);
}

template <typename T>
__global__ void affine_grid_kernel(const T* __restrict__ theta, T* __restrict__ grid, Dims d, bool is3) {
  int64_t r, j;
  if (!first_row(d, r, j)) return;
  for (const int64_t rows = d.N * d.Do * d.Ho; r < rows; r += row_stride())
    affine_grid_location(theta, grid, d, is3, r, j);
}

dim3 launch_grid(const Dims& d) {
  const int64_t rows = d.N * d.Do * d.Ho;
  const int64_t gy = (rows + kBlockY - 1) / kBlockY;
  return dim3((unsigned)((d.Wo + kBlockX - 1) / kBlockX), (unsigned)(gy < kMaxGridY ? gy : kMaxGridY), 1);
}

int launch_status() {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? SURGEON_OK : SURGEON_ERR_CUDA_BASE + (int)err;
}

// The one launch site: the launch shape for d, then the error check.  The tests also compile
// this file with g++ against a host stand-in for the CUDA runtime (tests/kernels/cuda_on_host),
// which runs every block and thread in turn: the kernels' indexing is checked without a GPU.
template <typename... P, typename... A>
int launch_kernel(void (*kernel)(P...), const Dims& d, cudaStream_t stream, A... args) {
  const dim3 grid = launch_grid(d), block(kBlockX, kBlockY);
#ifdef SURGEON_CUDA_ON_HOST
  (void)stream;
  on_host::run(grid, block, [&] { kernel(args...); });
#else
  kernel<<<grid, block, 0, stream>>>(args...);
#endif
  return launch_status();
}

template <bool kFromTheta, typename T>
int sample(int spatial_dims, const void* x, const void* coords, void* y, const Dims& d, int mode, int pad,
           cudaStream_t stream) {
  const T* xp = (const T*)x;
  const T* cp = (const T*)coords;
  T* yp = (T*)y;
  int rc = SURGEON_OK;
  if (spatial_dims == 2) {
    with_mode_pad<true>(mode, pad, [&](auto m, auto p) {
      rc = launch_kernel(sample_2d_kernel<decltype(m)::value, decltype(p)::value, kFromTheta, T>, d, stream, xp, cp,
                         yp, d);
    });
  } else {
    with_mode_pad<false>(mode, pad, [&](auto m, auto p) {
      rc = launch_kernel(sample_3d_kernel<decltype(m)::value, decltype(p)::value, kFromTheta, T>, d, stream, xp, cp,
                         yp, d);
    });
  }
  return rc;
}

// Both sampling entry points: checks, then the float or half instantiation. ``coords`` is
// theta when kFromTheta, else an explicit grid.
template <bool kFromTheta>
int launch(int dtype, int spatial_dims, const void* x, const void* coords, void* y, int64_t N, int64_t C,
           const int64_t* in_size, const int64_t* out_size, int64_t coord_batch, int mode, int padding_mode,
           int align_corners, void* stream) {
  const int rc = check_sampling(dtype, spatial_dims, x, coords, y, N, C, in_size, out_size, coord_batch, mode,
                                padding_mode, align_corners);
  if (rc != SURGEON_OK) return rc;
  const Dims d = make_dims(spatial_dims, N, C, in_size, out_size, coord_batch, align_corners);
  return with_dtype(dtype, [&](auto t) {
    return sample<kFromTheta, decltype(t)>(spatial_dims, x, coords, y, d, mode, padding_mode, (cudaStream_t)stream);
  });
}

}  // namespace gpu
}  // namespace sk

// The CPU library defines these two as well: weak here, so that one shared library may link
// both static archives (the onnxruntime op library's CUDA variant does) and keep the CPU's.
#if defined(_WIN32)
#define SK_SHARED_ABI
#else
#define SK_SHARED_ABI __attribute__((weak))
#endif

extern "C" {

SK_SHARED_ABI int surgeon_kernels_abi_version(void) { return SURGEON_KERNELS_ABI_VERSION; }

SK_SHARED_ABI const char* surgeon_kernels_error_string(int code) { return sk::error_string(code); }

const char* surgeon_cuda_error_string(int code) {
  if (code < SURGEON_ERR_CUDA_BASE) return sk::error_string(code);
  return cudaGetErrorString((cudaError_t)(code - SURGEON_ERR_CUDA_BASE));
}

int surgeon_affine_grid_cuda(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                             const int64_t* out_size, int align_corners, void* stream) {
  const int rc = sk::check_common(dtype, spatial_dims, N, out_size, align_corners);
  if (rc != SURGEON_OK) return rc;
  if (theta == nullptr || grid == nullptr) return SURGEON_ERR_INVALID_ARGUMENT;
  const sk::Dims d = sk::make_dims(spatial_dims, N, 1, nullptr, out_size, N, align_corners);
  return sk::with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    return sk::gpu::launch_kernel(sk::gpu::affine_grid_kernel<T>, d, (cudaStream_t)stream, (const T*)theta, (T*)grid,
                                  d, spatial_dims == 3);
  });
}

int surgeon_fused_grid_sample_cuda(int dtype, int spatial_dims, const void* x, const void* theta,
                                   void* y, int64_t N, int64_t C, const int64_t* in_size,
                                   const int64_t* out_size, int64_t theta_batch, int mode,
                                   int padding_mode, int align_corners, void* stream) {
  return sk::gpu::launch<true>(dtype, spatial_dims, x, theta, y, N, C, in_size, out_size, theta_batch, mode,
                               padding_mode, align_corners, stream);
}

int surgeon_grid_sample_cuda(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                             int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                             int64_t grid_batch, int mode, int padding_mode, int align_corners,
                             void* stream) {
  return sk::gpu::launch<false>(dtype, spatial_dims, x, grid, y, N, C, in_size, out_size, grid_batch, mode,
                                padding_mode, align_corners, stream);
}

}  // extern "C"
