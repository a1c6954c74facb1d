// One output location, start to end: what a CUDA thread does, and what the CPU build does
// with its fast paths off.  Sharing it lets the CPU tests run the GPU's per-thread code,
// index arithmetic included, on machines without a GPU.
#pragma once

#include "isa.h"

#include <stdint.h>

#include "grid_sample_math.h"

namespace sk {
SK_ISA_BEGIN

// Sizes of one call; D = Do = 1 for 2-D.  Rows run over N x Do x Ho.
struct Dims {
  int64_t N, C, D, H, W, Do, Ho, Wo, coord_batch;
  int align_corners;
};

inline Dims make_dims(int spatial_dims, int64_t N, int64_t C, const int64_t* in, const int64_t* out,
                      int64_t coord_batch, int align_corners) {
  const bool is3 = spatial_dims == 3;
  Dims d;
  d.N = N;
  d.C = C;
  d.D = (is3 && in) ? in[0] : 1;
  d.H = in ? in[is3 ? 1 : 0] : 1;
  d.W = in ? in[is3 ? 2 : 1] : 1;
  d.Do = is3 ? out[0] : 1;
  d.Ho = out[is3 ? 1 : 0];
  d.Wo = out[is3 ? 2 : 1];
  d.coord_batch = coord_batch;
  d.align_corners = align_corners;
  return d;
}

template <typename T>
SK_HD void load_theta(const T* theta, int64_t n, int count, float* t) {
  for (int k = 0; k < count; ++k) t[k] = to_float(theta[n * count + k]);
}

// Output row r, column j of a 2-D sample; coordinates from theta or an explicit grid.
template <int MODE, int PAD, bool kFromTheta, typename T>
SK_HD void sample_location_2d(const T* __restrict__ x, const T* __restrict__ coords, T* __restrict__ y,
                              const Dims& d, int64_t r, int64_t j) {
  const int64_t n = r / d.Ho, i = r - n * d.Ho, cn = d.coord_batch == 1 ? 0 : n;
  const int64_t out_plane = d.Ho * d.Wo;
  float gx, gy;
  if (kFromTheta) {
    float t[6];
    load_theta(coords, cn, 6, t);
    const float bx = base_coord(j, d.Wo, d.align_corners), by = base_coord(i, d.Ho, d.align_corners);
    gx = affine_row2(t, bx, by);
    gy = affine_row2(t + 3, bx, by);
  } else {
    const T* g = coords + ((cn * d.Ho + i) * d.Wo + j) * 2;
    gx = to_float(g[0]);
    gy = to_float(g[1]);
  }
  sample_2d<MODE, PAD>(x + n * d.C * d.H * d.W, d.C, d.H, d.W, gx, gy, d.align_corners,
                       y + n * d.C * out_plane + i * d.Wo + j, out_plane);
}

// Output row r (over N x Do x Ho), column j of a 3-D sample.
template <int MODE, int PAD, bool kFromTheta, typename T>
SK_HD void sample_location_3d(const T* __restrict__ x, const T* __restrict__ coords, T* __restrict__ y,
                              const Dims& d, int64_t r, int64_t j) {
  const int64_t n = r / (d.Do * d.Ho), dh = r - n * d.Do * d.Ho, k = dh / d.Ho, i = dh - k * d.Ho;
  const int64_t cn = d.coord_batch == 1 ? 0 : n, out_plane = d.Do * d.Ho * d.Wo;
  float gx, gy, gz;
  if (kFromTheta) {
    float t[12];
    load_theta(coords, cn, 12, t);
    const float bx = base_coord(j, d.Wo, d.align_corners), by = base_coord(i, d.Ho, d.align_corners);
    const float bz = base_coord(k, d.Do, d.align_corners);
    gx = affine_row3(t, bx, by, bz);
    gy = affine_row3(t + 4, bx, by, bz);
    gz = affine_row3(t + 8, bx, by, bz);
  } else {
    const T* g = coords + (((cn * d.Do + k) * d.Ho + i) * d.Wo + j) * 3;
    gx = to_float(g[0]);
    gy = to_float(g[1]);
    gz = to_float(g[2]);
  }
  sample_3d<MODE, PAD>(x + n * d.C * d.D * d.H * d.W, d.C, d.D, d.H, d.W, gx, gy, gz, d.align_corners,
                       y + n * d.C * out_plane + dh * d.Wo + j, out_plane);
}

// Grid point at row r (over N x Do x Ho), column j.
template <typename T>
SK_HD void affine_grid_location(const T* __restrict__ theta, T* __restrict__ grid, const Dims& d, bool is3,
                                int64_t r, int64_t j) {
  const int64_t n = r / (d.Do * d.Ho), dh = r - n * d.Do * d.Ho, k = dh / d.Ho, i = dh - k * d.Ho;
  const float bx = base_coord(j, d.Wo, d.align_corners), by = base_coord(i, d.Ho, d.align_corners);
  if (is3) {
    float t[12];
    load_theta(theta, n, 12, t);
    const float bz = base_coord(k, d.Do, d.align_corners);
    T* g = grid + (r * d.Wo + j) * 3;
    for (int c = 0; c < 3; ++c) g[c] = from_float<T>(affine_row3(t + 4 * c, bx, by, bz));
  } else {
    float t[6];
    load_theta(theta, n, 6, t);
    T* g = grid + (r * d.Wo + j) * 2;
    for (int c = 0; c < 2; ++c) g[c] = from_float<T>(affine_row2(t + 3 * c, bx, by));
  }
}

SK_ISA_END
}  // namespace sk
