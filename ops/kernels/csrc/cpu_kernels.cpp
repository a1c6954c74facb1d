// CPU launchers of the C ABI in surgeon_kernels.h.
//
// float32 within int32 offsets takes the fast paths (cpu_fast.cpp).  float16, huge images,
// and every call while the fast paths are switched off (a testing hook) run locations.h per
// output location: exactly the code of one CUDA thread.
#include <atomic>
#include <type_traits>
#include <vector>

#include "abi_checks.h"
#include "cpu_common.h"
#include "grid_sample_math.h"
#include "locations.h"
#include "surgeon_kernels.h"

namespace sk {
namespace cpu {
namespace {

std::atomic<int> g_fast_paths{1};

// Every output location through locations.h, rows split over threads.
template <bool kFromTheta, typename T>
void sample_locations(int spatial_dims, const T* x, const T* coords, T* y, const Dims& d, int mode, int pad,
                      int threads) {
  if (spatial_dims == 2) {
    with_mode_pad<true>(mode, pad, [&](auto m, auto p) {
      parallel_rows(threads, d.N * d.Ho, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t j = 0; j < d.Wo; ++j)
            sample_location_2d<decltype(m)::value, decltype(p)::value, kFromTheta>(x, coords, y, d, r, j);
      });
    });
  } else {
    with_mode_pad<false>(mode, pad, [&](auto m, auto p) {
      parallel_rows(threads, d.N * d.Do * d.Ho, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t j = 0; j < d.Wo; ++j)
            sample_location_3d<decltype(m)::value, decltype(p)::value, kFromTheta>(x, coords, y, d, r, j);
      });
    });
  }
}

template <bool kFromTheta, typename T>
int sample(int spatial_dims, const void* x, const void* coords, void* y, int64_t N, int64_t C,
           const int64_t* in, const int64_t* out, int64_t coord_batch, int mode, int pad, int ac,
           int num_threads) {
  int64_t values = N * C;
  for (int k = 0; k < spatial_dims; ++k) values *= out[k];
  const int threads = resolve_threads(num_threads, values);
  const Dims d = make_dims(spatial_dims, N, C, in, out, coord_batch, ac);
  if constexpr (std::is_same<T, float>::value) {
    if (g_fast_paths.load() != 0 && fits_int32(d.D, d.H, d.W)) {
      fast_sample(spatial_dims, kFromTheta, (const float*)x, (const float*)coords, (float*)y, N, C, in, out,
                  coord_batch, mode, pad, ac, threads);
      return SURGEON_OK;
    }
  }
  sample_locations<kFromTheta>(spatial_dims, (const T*)x, (const T*)coords, (T*)y, d, mode, pad, threads);
  return SURGEON_OK;
}

// ------------------------------------------------------------------ the grid itself
template <typename T>
int affine_grid(int spatial_dims, const void* theta_v, void* grid_v, int64_t N, const int64_t* out,
                int ac, int num_threads) {
  const T* theta = (const T*)theta_v;
  T* grid = (T*)grid_v;
  const bool is3 = spatial_dims == 3;
  const int64_t Do = is3 ? out[0] : 1, Ho = out[is3 ? 1 : 0], Wo = out[is3 ? 2 : 1];
  const int k = is3 ? 3 : 2;  // coordinates per point
  const std::vector<float> bx = base_table(Wo, ac), by = base_table(Ho, ac), bz = base_table(Do, ac);
  const std::vector<float> th = to_floats(theta, N * k * (k + 1));
  const int threads = resolve_threads(num_threads, N * Do * Ho * Wo * k);
  if (g_fast_paths.load() == 0) {
    const Dims d = make_dims(spatial_dims, N, 1, nullptr, out, N, ac);
    parallel_rows(threads, N * Do * Ho, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < Wo; ++j) affine_grid_location(theta, grid, d, is3, r, j);
    });
    return SURGEON_OK;
  }
  parallel_rows(threads, N * Do * Ho, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / (Do * Ho), dh = r % (Do * Ho), d = dh / Ho, i = dh % Ho;
      const float* t = th.data() + n * k * (k + 1);
      T* g = grid + r * Wo * k;
      for (int64_t j = 0; j < Wo; ++j) {
        const float b = bx[(size_t)j];
        if (is3) {
          for (int c = 0; c < 3; ++c)
            g[j * 3 + c] = from_float<T>(affine_row3(t + 4 * c, b, by[(size_t)i], bz[(size_t)d]));
        } else {
          for (int c = 0; c < 2; ++c) g[j * 2 + c] = from_float<T>(affine_row2(t + 3 * c, b, by[(size_t)i]));
        }
      }
    }
  });
  return SURGEON_OK;
}

}  // namespace
}  // namespace cpu
}  // namespace sk

// ------------------------------------------------------------------ the C ABI
namespace sk {
namespace cpu {

// Both sampling entry points: checks, then the float or half instantiation. ``coords`` is
// theta when kFromTheta, else an explicit grid.
template <bool kFromTheta>
int launch(int dtype, int spatial_dims, const void* x, const void* coords, void* y, int64_t N, int64_t C,
           const int64_t* in_size, const int64_t* out_size, int64_t coord_batch, int mode, int padding_mode,
           int align_corners, int num_threads) {
  const int rc = check_sampling(dtype, spatial_dims, x, coords, y, N, C, in_size, out_size, coord_batch, mode,
                                padding_mode, align_corners);
  if (rc != SURGEON_OK) return rc;
  return guarded([&] {
    return with_dtype(dtype, [&](auto t) {
      return sample<kFromTheta, decltype(t)>(spatial_dims, x, coords, y, N, C, in_size, out_size, coord_batch,
                                             mode, padding_mode, align_corners, num_threads);
    });
  });
}

}  // namespace cpu
}  // namespace sk

extern "C" {

int surgeon_kernels_abi_version(void) { return SURGEON_KERNELS_ABI_VERSION; }

const char* surgeon_kernels_error_string(int code) { return sk::error_string(code); }

void surgeon_cpu_set_fast_paths(int enabled) { sk::cpu::g_fast_paths.store(enabled ? 1 : 0); }

int surgeon_cpu_default_threads(void) { return sk::cpu::default_threads(); }

int surgeon_affine_grid_cpu(int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                            const int64_t* out_size, int align_corners, int num_threads) {
  const int rc = sk::check_common(dtype, spatial_dims, N, out_size, align_corners);
  if (rc != SURGEON_OK) return rc;
  if (theta == nullptr || grid == nullptr) return SURGEON_ERR_INVALID_ARGUMENT;
  return sk::guarded([&] {
    return sk::with_dtype(dtype, [&](auto t) {
      return sk::cpu::affine_grid<decltype(t)>(spatial_dims, theta, grid, N, out_size, align_corners, num_threads);
    });
  });
}

int surgeon_fused_grid_sample_cpu(int dtype, int spatial_dims, const void* x, const void* theta,
                                  void* y, int64_t N, int64_t C, const int64_t* in_size,
                                  const int64_t* out_size, int64_t theta_batch, int mode,
                                  int padding_mode, int align_corners, int num_threads) {
  return sk::cpu::launch<true>(dtype, spatial_dims, x, theta, y, N, C, in_size, out_size, theta_batch, mode,
                               padding_mode, align_corners, num_threads);
}

int surgeon_grid_sample_cpu(int dtype, int spatial_dims, const void* x, const void* grid, void* y,
                            int64_t N, int64_t C, const int64_t* in_size, const int64_t* out_size,
                            int64_t grid_batch, int mode, int padding_mode, int align_corners,
                            int num_threads) {
  return sk::cpu::launch<false>(dtype, spatial_dims, x, grid, y, N, C, in_size, out_size, grid_batch, mode,
                                padding_mode, align_corners, num_threads);
}

}  // extern "C"
