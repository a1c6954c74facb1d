/* surgeon reference kernels: the plain C ABI of custom.ops::AffineGrid and
 * custom.ops::FusedGridSample (see ops/OPS.md), plus a standard grid sample at an explicit grid.
 *
 * Two shared libraries export it: the CPU one (cpu_*.cpp, thread_pool.cpp) and the CUDA one
 * (cuda_kernels.cu); the build also leaves each as a static archive (position-independent), which
 * an engine plugin links so that it runs this very code.  A plugin's enqueue can call the CUDA
 * launchers directly.
 *
 * Semantics: torch's F.affine_grid / F.grid_sample.  Coordinates are computed in float32 in
 * torch's unfused CPU evaluation order, so floor() and nearest ties land where torch's do
 * (torch's BLAS path for large grids may fuse multiply-adds and differ by an ulp); float16
 * data is read and written as float16 and every computation runs in float32.  The arithmetic
 * lives once, in grid_sample_math.h, with a fixed operation order (no compiler contraction;
 * explicit fmaf), so the CPU and CUDA libraries compute the same bits; each CUDA thread runs locations.h, which the CPU build
 * runs too when its fast paths are off (a testing hook, below).
 *
 * Non-finite coordinates (decided): a NaN or infinite normalised grid coordinate, whether it
 * comes from an explicit grid or from theta (NaN or infinite entries, or an overflow), is
 * replaced by -1 before it is unnormalised, in every mode and padding, on the CPU and CUDA
 * alike (grid_sample_math.h's unnormalize; the numpy oracle does the same).  onnxruntime's
 * GridSample samples any non-finite coordinate as if it were -1, so a fused model gives what
 * its unfused onnxruntime original gives; torch's CPU kernels give NaN, 0 or an edge value
 * depending on mode and padding, and differ from its CUDA ones.  Finite coordinates, and NaN
 * or infinite values in x, are sampled as torch does; a finite coordinate too large for the
 * image samples nothing with zero padding, as in torch's CUDA kernels.
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
 * number of CPUs this process may run on.  They return when the output is written.  The _ex
 * forms run on an engine's own thread pool instead (surgeon_cpu_executor), so that a plugin
 * inside a runtime shares the runtime's threads rather than adding its own.
 * One library runs on any x86-64 CPU: its kernels are compiled for several instruction-set
 * levels and the widest the CPU (and OS) supports is picked once, at the first call;
 * $SURGEON_CPU_LEVEL names a lower one (testing), surgeon_cpu_level() tells which runs.
 * CUDA launchers: all pointers are device pointers on the current device; the work is queued
 * on `stream` (a cudaStream_t; NULL is the legacy default stream) and the call returns
 * without synchronising.  Nothing is allocated.
 *
 * Every launcher returns SURGEON_OK (0) or an error code; surgeon_kernels_error_string()
 * describes one.  A CUDA launch error is returned as SURGEON_ERR_CUDA_BASE + cudaError_t.
 */
#ifndef SURGEON_KERNELS_H_
#define SURGEON_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SURGEON_KERNELS_ABI_VERSION 2

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

/* An engine's thread pool: parallel_for(ctx, n_tasks, task, task_ctx) calls task(task_ctx, i)
 * once for every i in [0, n_tasks), on any threads, and returns 0 when all have run (nonzero:
 * failed; the launcher then returns SURGEON_ERR_INTERNAL).  threads: the pool's size, or 0 if
 * unknown; it only decides how finely the work is cut, never a result. */
typedef struct surgeon_cpu_executor {
  int (*parallel_for)(void* ctx, size_t n_tasks, void (*task)(void* task_ctx, size_t i), void* task_ctx);
  void* ctx;
  int threads;
} surgeon_cpu_executor;

/* The launchers above on `executor`'s threads (NULL: as num_threads <= 0). */
SURGEON_API int surgeon_affine_grid_cpu_ex(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                               const int64_t* out_size, int align_corners, const surgeon_cpu_executor* executor);

SURGEON_API int surgeon_fused_grid_sample_cpu_ex(int dtype, int spatial_dims, const void* x, const void* theta,
                                     void* y, int64_t N, int64_t C, const int64_t* in_size,
                                     const int64_t* out_size, int64_t theta_batch, int mode,
                                     int padding_mode, int align_corners, const surgeon_cpu_executor* executor);

SURGEON_API int surgeon_grid_sample_cpu_ex(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                               int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                               int64_t grid_batch, int mode, int padding_mode, int align_corners,
                               const surgeon_cpu_executor* executor);

/* The instruction-set level the CPU launchers run: "x86-64", "x86-64-v3", "x86-64-v4" or, off
 * x86-64, "generic". */
SURGEON_API const char* surgeon_cpu_level(void);

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
