// CPU samplers for one segment of an output row (up to kChunk consecutive output pixels).
//
// Fast paths (float32, AVX2+FMA): pass 1 computes each pixel's tap offsets, masks and
// weights once, with the shared scalar math in loops the compiler vectorises; pass 2 applies
// them to every channel with masked gathers.  They reproduce the per-pixel functions of
// grid_sample_math.h bit for bit (same operations, same fma order; a masked-off tap adds
// w*0), which the tests check by switching the fast paths off.  Everything else (float16, no
// AVX2, images too large for int32 offsets) runs those per-pixel functions directly.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "grid_sample_math.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SK_HAVE_AVX2 1
#else
#define SK_HAVE_AVX2 0
#endif

namespace sk {
namespace cpu {

constexpr int kChunk = 256;  // pixels per segment: the per-pixel tables stay in L1

// The input image of one batch item (D = 1 for 2-D).
struct Image {
  int64_t C, D, H, W;
  int align_corners;
};

// The SIMD paths address taps with int32 offsets of coordinates clamped to [-2, size].
inline bool fits_int32(const Image& im) {
  return (im.D + 4) * (im.H + 4) * (im.W + 4) < (int64_t(1) << 31);
}

inline int32_t clamp_tap(int32_t i, int32_t size) { return i < -2 ? -2 : (i > size ? size : i); }

#if SK_HAVE_AVX2
inline __m256 gather(const float* base, __m256i idx, __m256i mask) {
  return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, idx, _mm256_castsi256_ps(mask), 4);
}
inline __m256 load(const float* p) { return _mm256_load_ps(p); }
inline __m256i load(const int32_t* p) { return _mm256_load_si256((const __m256i*)p); }

// Stores the first n (1..8) lanes.
inline void store_lanes(float* y, __m256 v, int n) {
  if (n >= 8) {
    _mm256_storeu_ps(y, v);
  } else {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(y, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes), v);
  }
}

// Lanes past the segment's end: masks 0 so that the vector loops may run whole vectors.
inline void clear_tail(int32_t* m, int from, int to) {
  for (int j = from; j < to; ++j) m[j] = 0;
}
inline int round8(int n) { return (n + 7) & ~7; }

template <int PAD>
void bilinear_fast_2d(const float* x, const Image& im, const float* gx, const float* gy, int len,
                      float* y, int64_t ystride) {
  alignas(32) float w[4][kChunk];
  alignas(32) int32_t m[4][kChunk];
  alignas(32) int32_t off[kChunk];
  const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
  const int ac = im.align_corners;
  for (int j = 0; j < len; ++j) {
    const float cx = source_coord<PAD>(gx[j], im.W, ac), cy = source_coord<PAD>(gy[j], im.H, ac);
    const float fx = floorf(cx), fy = floorf(cy);
    const float wx0 = (fx + 1.0f) - cx, wx1 = cx - fx, wy0 = (fy + 1.0f) - cy, wy1 = cy - fy;
    w[0][j] = wx0 * wy0;
    w[1][j] = wx1 * wy0;
    w[2][j] = wx0 * wy1;
    w[3][j] = wx1 * wy1;
    const int32_t x0 = (int32_t)fx, y0 = (int32_t)fy;
    const int32_t vx0 = -(int32_t)((x0 >= 0) & (x0 < W)), vx1 = -(int32_t)((x0 >= -1) & (x0 < W - 1));
    const int32_t vy0 = -(int32_t)((y0 >= 0) & (y0 < H)), vy1 = -(int32_t)((y0 >= -1) & (y0 < H - 1));
    m[0][j] = vy0 & vx0;
    m[1][j] = vy0 & vx1;
    m[2][j] = vy1 & vx0;
    m[3][j] = vy1 & vx1;
    off[j] = clamp_tap(y0, H) * W + clamp_tap(x0, W);
  }
  const int n8 = round8(len);
  for (int k = 0; k < 4; ++k) clear_tail(m[k], len, n8);
  clear_tail(off, len, n8);
  const int64_t plane = im.H * im.W;
  for (int64_t c = 0; c < im.C; ++c) {
    const float* p = x + c * plane;
    float* out = y + c * ystride;
    for (int j = 0; j < len; j += 8) {
      const __m256i o = load(off + j);
      __m256 acc = _mm256_setzero_ps();
      acc = _mm256_fmadd_ps(load(w[0] + j), gather(p, o, load(m[0] + j)), acc);
      acc = _mm256_fmadd_ps(load(w[1] + j), gather(p + 1, o, load(m[1] + j)), acc);
      acc = _mm256_fmadd_ps(load(w[2] + j), gather(p + W, o, load(m[2] + j)), acc);
      acc = _mm256_fmadd_ps(load(w[3] + j), gather(p + W + 1, o, load(m[3] + j)), acc);
      store_lanes(out + j, acc, len - j);
    }
  }
}

template <int PAD>
void nearest_fast_2d(const float* x, const Image& im, const float* gx, const float* gy, int len,
                     float* y, int64_t ystride) {
  alignas(32) int32_t m[kChunk], off[kChunk];
  const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
  const int ac = im.align_corners;
  for (int j = 0; j < len; ++j) {
    const int32_t ix = (int32_t)nearbyintf(source_coord<PAD>(gx[j], im.W, ac));
    const int32_t iy = (int32_t)nearbyintf(source_coord<PAD>(gy[j], im.H, ac));
    m[j] = -(int32_t)((ix >= 0) & (ix < W) & (iy >= 0) & (iy < H));
    off[j] = clamp_tap(iy, H) * W + clamp_tap(ix, W);
  }
  const int n8 = round8(len);
  clear_tail(m, len, n8);
  clear_tail(off, len, n8);
  const int64_t plane = im.H * im.W;
  for (int64_t c = 0; c < im.C; ++c) {
    const float* p = x + c * plane;
    float* out = y + c * ystride;
    for (int j = 0; j < len; j += 8) store_lanes(out + j, gather(p, load(off + j), load(m + j)), len - j);
  }
}

template <int PAD>
void bicubic_fast_2d(const float* x, const Image& im, const float* gx, const float* gy, int len,
                     float* y, int64_t ystride) {
  alignas(32) float wx[4][kChunk], wy[4][kChunk];
  alignas(32) int32_t xi[4][kChunk], yo[4][kChunk];  // column index, row offset; -1: outside
  const int ac = im.align_corners;
  const int32_t W = (int32_t)im.W;
  for (int j = 0; j < len; ++j) {
    const float cx = unnormalize(gx[j], im.W, ac), cy = unnormalize(gy[j], im.H, ac);
    const float fx = floorf(cx), fy = floorf(cy);
    float a[4], b[4];
    cubic_weights(cx - fx, a);
    cubic_weights(cy - fy, b);
    for (int k = 0; k < 4; ++k) {
      wx[k][j] = a[k];
      wy[k][j] = b[k];
      xi[k][j] = (int32_t)cubic_tap<PAD>(fx - 1.0f + (float)k, im.W, ac);
      const int32_t r = (int32_t)cubic_tap<PAD>(fy - 1.0f + (float)k, im.H, ac);
      yo[k][j] = r < 0 ? -1 : r * W;
    }
  }
  const int n8 = round8(len);
  for (int k = 0; k < 4; ++k) {
    for (int j = len; j < n8; ++j) xi[k][j] = yo[k][j] = -1;
  }
  const int64_t plane = im.H * im.W;
  const __m256i none = _mm256_set1_epi32(-1);
  for (int64_t c = 0; c < im.C; ++c) {
    const float* p = x + c * plane;
    float* out = y + c * ystride;
    for (int j = 0; j < len; j += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int r = 0; r < 4; ++r) {
        const __m256i ro = load(yo[r] + j);
        const __m256i rv = _mm256_cmpgt_epi32(ro, none);
        __m256 row = _mm256_setzero_ps();
        for (int k = 0; k < 4; ++k) {
          const __m256i ci = load(xi[k] + j);
          const __m256i mask = _mm256_and_si256(rv, _mm256_cmpgt_epi32(ci, none));
          row = _mm256_fmadd_ps(load(wx[k] + j), gather(p, _mm256_add_epi32(ro, ci), mask), row);
        }
        acc = _mm256_fmadd_ps(load(wy[r] + j), row, acc);
      }
      store_lanes(out + j, acc, len - j);
    }
  }
}

template <int PAD>
void trilinear_fast_3d(const float* x, const Image& im, const float* gx, const float* gy,
                       const float* gz, int len, float* y, int64_t ystride) {
  alignas(32) float w[8][kChunk];
  alignas(32) int32_t m[8][kChunk];
  alignas(32) int32_t off[kChunk];
  const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
  const int ac = im.align_corners;
  for (int j = 0; j < len; ++j) {
    const float cx = source_coord<PAD>(gx[j], im.W, ac), cy = source_coord<PAD>(gy[j], im.H, ac);
    const float cz = source_coord<PAD>(gz[j], im.D, ac);
    const float fx = floorf(cx), fy = floorf(cy), fz = floorf(cz);
    const float wx[2] = {(fx + 1.0f) - cx, cx - fx}, wy[2] = {(fy + 1.0f) - cy, cy - fy};
    const float wz[2] = {(fz + 1.0f) - cz, cz - fz};
    const int32_t x0 = (int32_t)fx, y0 = (int32_t)fy, z0 = (int32_t)fz;
    const int32_t vx[2] = {-(int32_t)((x0 >= 0) & (x0 < W)), -(int32_t)((x0 >= -1) & (x0 < W - 1))};
    const int32_t vy[2] = {-(int32_t)((y0 >= 0) & (y0 < H)), -(int32_t)((y0 >= -1) & (y0 < H - 1))};
    const int32_t vz[2] = {-(int32_t)((z0 >= 0) & (z0 < D)), -(int32_t)((z0 >= -1) & (z0 < D - 1))};
    for (int k = 0; k < 8; ++k) {
      const int dz = k >> 2, dy = (k >> 1) & 1, dx = k & 1;
      w[k][j] = (wx[dx] * wy[dy]) * wz[dz];
      m[k][j] = vz[dz] & vy[dy] & vx[dx];
    }
    off[j] = (clamp_tap(z0, D) * H + clamp_tap(y0, H)) * W + clamp_tap(x0, W);
  }
  const int n8 = round8(len);
  for (int k = 0; k < 8; ++k) clear_tail(m[k], len, n8);
  clear_tail(off, len, n8);
  const int64_t plane = im.D * im.H * im.W;
  for (int64_t c = 0; c < im.C; ++c) {
    const float* p = x + c * plane;
    float* out = y + c * ystride;
    for (int j = 0; j < len; j += 8) {
      const __m256i o = load(off + j);
      __m256 acc = _mm256_setzero_ps();
      for (int k = 0; k < 8; ++k) {
        const int dz = k >> 2, dy = (k >> 1) & 1, dx = k & 1;
        const float* tap = p + ((int64_t)dz * H + dy) * W + dx;
        acc = _mm256_fmadd_ps(load(w[k] + j), gather(tap, o, load(m[k] + j)), acc);
      }
      store_lanes(out + j, acc, len - j);
    }
  }
}

template <int PAD>
void nearest_fast_3d(const float* x, const Image& im, const float* gx, const float* gy,
                     const float* gz, int len, float* y, int64_t ystride) {
  alignas(32) int32_t m[kChunk], off[kChunk];
  const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
  const int ac = im.align_corners;
  for (int j = 0; j < len; ++j) {
    const int32_t ix = (int32_t)nearbyintf(source_coord<PAD>(gx[j], im.W, ac));
    const int32_t iy = (int32_t)nearbyintf(source_coord<PAD>(gy[j], im.H, ac));
    const int32_t iz = (int32_t)nearbyintf(source_coord<PAD>(gz[j], im.D, ac));
    m[j] = -(int32_t)((ix >= 0) & (ix < W) & (iy >= 0) & (iy < H) & (iz >= 0) & (iz < D));
    off[j] = (clamp_tap(iz, D) * H + clamp_tap(iy, H)) * W + clamp_tap(ix, W);
  }
  const int n8 = round8(len);
  clear_tail(m, len, n8);
  clear_tail(off, len, n8);
  const int64_t plane = im.D * im.H * im.W;
  for (int64_t c = 0; c < im.C; ++c) {
    const float* p = x + c * plane;
    float* out = y + c * ystride;
    for (int j = 0; j < len; j += 8) store_lanes(out + j, gather(p, load(off + j), load(m + j)), len - j);
  }
}
#endif  // SK_HAVE_AVX2

// One segment: gx/gy(/gz) hold its normalised grid coordinates; y points at its first output
// pixel in channel 0, ystride elements between channels.
template <int MODE, int PAD, typename T>
void sample_segment_2d(const T* x, const Image& im, const float* gx, const float* gy, int len, T* y,
                       int64_t ystride, bool fast) {
#if SK_HAVE_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (fast && fits_int32(im)) {
      if (MODE == kBilinear) bilinear_fast_2d<PAD>(x, im, gx, gy, len, y, ystride);
      else if (MODE == kNearest) nearest_fast_2d<PAD>(x, im, gx, gy, len, y, ystride);
      else bicubic_fast_2d<PAD>(x, im, gx, gy, len, y, ystride);
      return;
    }
  }
#endif
  (void)fast;
  for (int j = 0; j < len; ++j)
    sample_2d<MODE, PAD>(x, im.C, im.H, im.W, gx[j], gy[j], im.align_corners, y + j, ystride);
}

template <int MODE, int PAD, typename T>
void sample_segment_3d(const T* x, const Image& im, const float* gx, const float* gy, const float* gz,
                       int len, T* y, int64_t ystride, bool fast) {
#if SK_HAVE_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (fast && fits_int32(im)) {
      if (MODE == kNearest) nearest_fast_3d<PAD>(x, im, gx, gy, gz, len, y, ystride);
      else trilinear_fast_3d<PAD>(x, im, gx, gy, gz, len, y, ystride);
      return;
    }
  }
#endif
  (void)fast;
  for (int j = 0; j < len; ++j)
    sample_3d<MODE, PAD>(x, im.C, im.D, im.H, im.W, gx[j], gy[j], gz[j], im.align_corners, y + j,
                         ystride);
}

}  // namespace cpu
}  // namespace sk
