// The CPU kernels' per-location paths and the affine grid, compiled once per instruction-set
// level that changes them (cpu_level.h): float16 (F16C) and the shared math's fmaf (FMA) run
// several times faster at x86-64-v3 than at the baseline; AVX-512 adds nothing here.
//
// Every output location runs locations.h: exactly the code of one CUDA thread.  The ABI sends
// here huge images, and every call while the fast paths are switched off (a testing hook).
#include <vector>

#include "cpu_common.h"
#include "cpu_level.h"
#include "grid_sample_math.h"
#include "locations.h"
#include "surgeon_kernels.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {
namespace {

// Every output location through locations.h, rows split over threads.
template <bool kFromTheta, typename T>
void sample_locations(int spatial_dims, const T* x, const T* coords, T* y, const Dims& d, int mode, int pad,
                      const Workers& workers) {
  if (spatial_dims == 2) {
    with_mode_pad<true>(mode, pad, [&](auto m, auto p) {
      parallel_rows(workers, d.N * d.Ho, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t j = 0; j < d.Wo; ++j)
            sample_location_2d<decltype(m)::value, decltype(p)::value, kFromTheta>(x, coords, y, d, r, j);
      });
    });
  } else {
    with_mode_pad<false>(mode, pad, [&](auto m, auto p) {
      parallel_rows(workers, d.N * d.Do * d.Ho, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t j = 0; j < d.Wo; ++j)
            sample_location_3d<decltype(m)::value, decltype(p)::value, kFromTheta>(x, coords, y, d, r, j);
      });
    });
  }
}

void sample(bool from_theta, int dtype, int spatial_dims, const void* x, const void* coords, void* y, int64_t N,
            int64_t C, const int64_t* in, const int64_t* out, int64_t coord_batch, int mode, int pad, int ac,
            Workers workers) {
  const Dims d = make_dims(spatial_dims, N, C, in, out, coord_batch, ac);
  with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (from_theta) sample_locations<true>(spatial_dims, (const T*)x, (const T*)coords, (T*)y, d, mode, pad, workers);
    else sample_locations<false>(spatial_dims, (const T*)x, (const T*)coords, (T*)y, d, mode, pad, workers);
    return 0;
  });
}

// The grid itself: per location (the testing hook), or from per-call tables of the base grid.
template <typename T>
void affine_grid_typed(bool per_location, int spatial_dims, const T* theta, T* grid, int64_t N, const int64_t* out,
                       int ac, const Workers& workers) {
  const bool is3 = spatial_dims == 3;
  const int64_t Do = is3 ? out[0] : 1, Ho = out[is3 ? 1 : 0], Wo = out[is3 ? 2 : 1];
  const int k = is3 ? 3 : 2;  // coordinates per point
  if (per_location) {
    const Dims d = make_dims(spatial_dims, N, 1, nullptr, out, N, ac);
    parallel_rows(workers, N * Do * Ho, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < Wo; ++j) affine_grid_location(theta, grid, d, is3, r, j);
    });
    return;
  }
  const std::vector<float> bx = base_table(Wo, ac), by = base_table(Ho, ac), bz = base_table(Do, ac);
  const std::vector<float> th = to_floats(theta, N * k * (k + 1));
  parallel_rows(workers, N * Do * Ho, [&](int64_t r0, int64_t r1) {
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
}

void affine_grid(bool per_location, int dtype, int spatial_dims, const void* theta, void* grid, int64_t N,
                 const int64_t* out, int ac, Workers workers) {
  with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    affine_grid_typed(per_location, spatial_dims, (const T*)theta, (T*)grid, N, out, ac, workers);
    return 0;
  });
}

}  // namespace
}  // namespace cpu
SK_ISA_END

namespace levels {
const LocationPaths SK_LEVEL_TABLE(location_paths) = {cpu::sample, cpu::affine_grid};
}  // namespace levels
}  // namespace sk
