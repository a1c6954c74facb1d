// CPU launchers of the C ABI in surgeon_kernels.h, compiled once, for the baseline: argument
// checks and threads here, the work in the instruction-set level cpu_isa.cpp picked.
//
// Images within int32 offsets take the fast paths (cpu_fast.cpp).  Huge images, and every call
// while the fast paths are switched off (a testing hook), run locations.h per output location
// (cpu_locations.cpp): exactly the code of one CUDA thread.
#include <atomic>

#include "abi_checks.h"
#include "cpu_common.h"
#include "cpu_level.h"
#include "surgeon_kernels.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {
namespace {

std::atomic<int> g_fast_paths{1};

// The threads of one call writing `values` outputs: the engine's pool when given (its size,
// if known, only cuts the work), else num_threads (<= 0: the default) of the library's.
Workers workers_for(int num_threads, const surgeon_cpu_executor* pool, int64_t values) {
  if (pool != nullptr) return Workers{resolve_threads(pool->threads, values), pool};
  return Workers{resolve_threads(num_threads, values), nullptr};
}

int64_t product(const int64_t* v, int n) {
  int64_t p = 1;
  for (int k = 0; k < n; ++k) p *= v[k];
  return p;
}

// Both sampling entry points: checks, then the fast paths or the per-location code.
// ``coords`` is theta when from_theta, else an explicit grid.
int sample(bool from_theta, int dtype, int spatial_dims, const void* x, const void* coords, void* y, int64_t N,
           int64_t C, const int64_t* in, const int64_t* out, int64_t coord_batch, int mode, int pad, int ac,
           int num_threads, const surgeon_cpu_executor* pool) {
  const int rc = check_sampling(dtype, spatial_dims, x, coords, y, N, C, in, out, coord_batch, mode, pad, ac);
  if (rc != SURGEON_OK) return rc;
  return guarded([&] {
    const Workers w = workers_for(num_threads, pool, N * C * product(out, spatial_dims));
    const levels::Level& level = levels::active_level();
    const bool is3 = spatial_dims == 3;
    const int64_t D = is3 ? in[0] : 1, H = in[is3 ? 1 : 0], W = in[is3 ? 2 : 1];
    if (g_fast_paths.load() != 0 && fits_int32(D, H, W)) {
      level.fast->sample(from_theta, dtype, spatial_dims, x, coords, y, N, C, in, out, coord_batch, mode, pad, ac, w);
    } else {
      level.locations->sample(from_theta, dtype, spatial_dims, x, coords, y, N, C, in, out, coord_batch, mode, pad,
                              ac, w);
    }
    return SURGEON_OK;
  });
}

int affine_grid(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N, const int64_t* out, int ac,
                int num_threads, const surgeon_cpu_executor* pool) {
  const int rc = check_common(dtype, spatial_dims, N, out, ac);
  if (rc != SURGEON_OK) return rc;
  if (theta == nullptr || grid == nullptr) return SURGEON_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    const Workers w = workers_for(num_threads, pool, N * product(out, spatial_dims) * spatial_dims);
    levels::active_level().locations->affine_grid(g_fast_paths.load() == 0, dtype, spatial_dims, theta, grid, N, out,
                                                  ac, w);
    return SURGEON_OK;
  });
}

}  // namespace
}  // namespace cpu
SK_ISA_END
}  // namespace sk

using sk::cpu::affine_grid;
using sk::cpu::sample;

extern "C" {

int surgeon_kernels_abi_version(void) { return SURGEON_KERNELS_ABI_VERSION; }

const char* surgeon_kernels_error_string(int code) { return sk::error_string(code); }

void surgeon_cpu_set_fast_paths(int enabled) { sk::cpu::g_fast_paths.store(enabled ? 1 : 0); }

int surgeon_cpu_default_threads(void) { return sk::cpu::default_threads(); }

const char* surgeon_cpu_level(void) { return sk::levels::active_level().name; }

int surgeon_affine_grid_cpu(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                            const int64_t* out_size, int align_corners, int num_threads) {
  return affine_grid(dtype, spatial_dims, theta, grid, N, out_size, align_corners, num_threads, nullptr);
}

int surgeon_affine_grid_cpu_ex(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                               const int64_t* out_size, int align_corners, const surgeon_cpu_executor* executor) {
  return affine_grid(dtype, spatial_dims, theta, grid, N, out_size, align_corners, 0, executor);
}

int surgeon_fused_grid_sample_cpu(int dtype, int spatial_dims, const void* x, const void* theta,
                                  void* y, int64_t N, int64_t C, const int64_t* in_size,
                                  const int64_t* out_size, int64_t theta_batch, int mode,
                                  int padding_mode, int align_corners, int num_threads) {
  return sample(true, dtype, spatial_dims, x, theta, y, N, C, in_size, out_size, theta_batch, mode, padding_mode,
                align_corners, num_threads, nullptr);
}

int surgeon_fused_grid_sample_cpu_ex(int dtype, int spatial_dims, const void* x, const void* theta,
                                     void* y, int64_t N, int64_t C, const int64_t* in_size,
                                     const int64_t* out_size, int64_t theta_batch, int mode,
                                     int padding_mode, int align_corners, const surgeon_cpu_executor* executor) {
  return sample(true, dtype, spatial_dims, x, theta, y, N, C, in_size, out_size, theta_batch, mode, padding_mode,
                align_corners, 0, executor);
}

int surgeon_grid_sample_cpu(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                            int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                            int64_t grid_batch, int mode, int padding_mode, int align_corners,
                            int num_threads) {
  return sample(false, dtype, spatial_dims, x, grid, y, N, C, in_size, out_size, grid_batch, mode, padding_mode,
                align_corners, num_threads, nullptr);
}

int surgeon_grid_sample_cpu_ex(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                               int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                               int64_t grid_batch, int mode, int padding_mode, int align_corners,
                               const surgeon_cpu_executor* executor) {
  return sample(false, dtype, spatial_dims, x, grid, y, N, C, in_size, out_size, grid_batch, mode, padding_mode,
                align_corners, 0, executor);
}

}  // extern "C"
