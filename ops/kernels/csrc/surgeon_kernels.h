/* surgeon reference kernels: the plain C ABI of custom.ops::AffineGrid and
 * custom.ops::FusedGridSample (see OPS.md), plus a standard grid sample at an explicit grid.
 *
 * Two shared libraries export it: the CPU one (cpu_kernels.cpp, cpu_fast.cpp) and the CUDA
 * one (cuda_kernels.cu).  An engine plugin's enqueue can call the CUDA launchers directly.
 *
 * Semantics: torch's F.affine_grid / F.grid_sample.  Coordinates are computed in float32 in
 * torch's unfused CPU evaluation order, so floor() and nearest ties land where torch's do
 * (torch's BLAS path for large grids may fuse multiply-adds and differ by an ulp); float16
 * data is read and written as float16 and every computation runs in float32.  The arithmetic lives once, in grid_sample_math.h, with a
 * fixed operation order (no compiler contraction; explicit fmaf), so the CPU and CUDA
 * libraries compute the same bits; each CUDA thread runs locations.h, which the CPU build
 * runs too when its fast paths are off (a testing hook, below).  Non-finite grid
 * coordinates sample nothing (0 with zero padding; bicubic gives NaN), as torch's CUDA
 * kernels do.
 *
 * Layout: every tensor is dense and row-major (C-contiguous), of one element type `dtype`:
 *   x      [N, C, H_in, W_in]            or [N, C, D_in, H_in, W_in]
 *   theta  [theta_batch, 2, 3]           or [theta_batch, 3, 4]
 *   grid   [grid_batch, H_out, W_out, 2] or [grid_batch, D_out, H_out, W_out, 3]  (x, y[, z])
 *   y      [N, C, H_out, W_out]          or [N, C, D_out, H_out, W_out]
 * spatial_dims is 2 or 3; in_size / out_size point at spatial_dims int64 values,
 * {H, W} or {D, H, W}.  theta_batch / grid_batch is N, or 1 to use the one matrix / grid for
 * every batch item (broadcast).  All sizes must be >= 1 (callers skip empty tensors).
 *
 * Attributes are plain ints: mode, padding_mode and dtype from the enums below,
 * align_corners 0 or 1.  Bicubic is 2-D only, as in torch.
 *
 * CPU launchers: num_threads <= 0 means the default: $SURGEON_NUM_THREADS if set, else the
 * number of CPUs this process may run on.  They return when the output is written.
 * CUDA launchers: all pointers are device pointers on the current device; the work is queued
 * on `stream` (a cudaStream_t; NULL is the legacy default stream) and the call returns
 * without synchronising.  Nothing is allocated.
 *
 * Every launcher returns SURGEON_OK (0) or an error code; surgeon_kernels_error_string()
 * describes one.  A CUDA launch error is returned as SURGEON_ERR_CUDA_BASE + cudaError_t.
 */
#ifndef SURGEON_KERNELS_H_
#define SURGEON_KERNELS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SURGEON_KERNELS_ABI_VERSION 1

/* The libraries are built with hidden visibility; only these symbols are exported. */
#if defined(_WIN32)
#define SURGEON_API __declspec(dllexport)
#else
#define SURGEON_API __attribute__((visibility("default")))
#endif

enum { SURGEON_DTYPE_FLOAT32 = 0, SURGEON_DTYPE_FLOAT16 = 1 };
enum { SURGEON_MODE_BILINEAR = 0, SURGEON_MODE_NEAREST = 1, SURGEON_MODE_BICUBIC = 2 };
enum { SURGEON_PADDING_ZEROS = 0, SURGEON_PADDING_BORDER = 1, SURGEON_PADDING_REFLECTION = 2 };
enum {
  SURGEON_OK = 0,
  SURGEON_ERR_INVALID_ARGUMENT = 1, /* bad dtype, dims, size, batch, mode or padding */
  SURGEON_ERR_UNSUPPORTED = 2,      /* e.g. 3-D bicubic */
  SURGEON_ERR_INTERNAL = 3,         /* e.g. out of memory for the small per-call tables */
  SURGEON_ERR_CUDA_BASE = 1000      /* + cudaError_t */
};

SURGEON_API int surgeon_kernels_abi_version(void);
SURGEON_API const char* surgeon_kernels_error_string(int code);

/* ---- CPU (libsurgeon_kernels_cpu) ---- */
SURGEON_API int surgeon_affine_grid_cpu(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                            const int64_t* out_size, int align_corners, int num_threads);

SURGEON_API int surgeon_fused_grid_sample_cpu(int dtype, int spatial_dims, const void* x, const void* theta,
                                  void* y, int64_t N, int64_t C, const int64_t* in_size,
                                  const int64_t* out_size, int64_t theta_batch, int mode,
                                  int padding_mode, int align_corners, int num_threads);

SURGEON_API int surgeon_grid_sample_cpu(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                            int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                            int64_t grid_batch, int mode, int padding_mode, int align_corners,
                            int num_threads);

/* Testing hook, not for plugins: 0 turns the CPU fast paths off, so that every output
 * location runs locations.h, the code of one CUDA thread.  Process-wide. */
SURGEON_API void surgeon_cpu_set_fast_paths(int enabled);
SURGEON_API int surgeon_cpu_default_threads(void);

/* ---- CUDA (libsurgeon_kernels_cuda) ---- */
SURGEON_API int surgeon_affine_grid_cuda(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                             const int64_t* out_size, int align_corners, void* stream);

SURGEON_API int surgeon_fused_grid_sample_cuda(int dtype, int spatial_dims, const void* x, const void* theta,
                                   void* y, int64_t N, int64_t C, const int64_t* in_size,
                                   const int64_t* out_size, int64_t theta_batch, int mode,
                                   int padding_mode, int align_corners, void* stream);

/* The CUDA runtime's message for a code returned by a CUDA launcher. */
SURGEON_API const char* surgeon_cuda_error_string(int code);

SURGEON_API int surgeon_grid_sample_cuda(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                             int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                             int64_t grid_batch, int mode, int padding_mode, int align_corners,
                             void* stream);

#ifdef __cplusplus
}
#endif

#endif /* SURGEON_KERNELS_H_ */
