// CPU samplers for one segment of an output row (up to kChunk consecutive output pixels).
//
// Fast paths (float32): pass 1 computes each pixel's weights and, when all its taps lie inside
// the image, the offset of its first tap, in loops of the shared scalar math that the compiler
// vectorises (their exact spelling matters: GCC 12 gives up on some equivalent forms; check
// -fopt-info-vec after editing them).  Pass 2 applies the weights to every channel with plain
// loads (bilinear: cpu_simd.h), and prefetches, per eight pixels, the lines the same pixels
// will read a few output rows on (ahead: cpu_fast.cpp).  Pixels with a tap outside the image
// go through the per-pixel functions of grid_sample_math.h, the code the CUDA kernels run;
// those with every tap outside under zero padding are simply 0.  Both routes give the same
// bits (same operations, same fma order), which the tests check by switching the fast paths
// off.  Callers (cpu_fast.cpp) run them for float32 within int32 offsets only.
#pragma once

#include "isa.h"

#include <stdint.h>

#include <algorithm>
#include <type_traits>

#include "cpu_simd.h"
#include "grid_sample_math.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {

constexpr int kChunk = 256;  // pixels per segment: the per-pixel tables stay in L1

// The input image of one batch item (D = 1 for 2-D).
struct Image {
  int64_t C, D, H, W;
  int align_corners;
};

// Clamped so the offset arithmetic cannot overflow: the compiler then evaluates it for
// every lane of a vectorised loop and selects afterwards.  Only in-range taps are used.
inline int32_t clamp_tap(int32_t i, int32_t size) { return std::max(0, std::min(i, size - 1)); }

// Pass 2 of the fast paths (bilinear has its own, cpu_simd.h).  Pixels with off[j] < 0 go to
// rim(j) (the per-pixel math, all channels); the others get apply(p, j) for each channel, p
// pointing at the pixel's first tap in that channel's plane.  Channels are taken in blocks of
// 4, inner to the pixel loop: a pixel's weights are loaded once per block, and only 4 planes
// are live at a time (64 planes per pixel thrashed the TLB and L1).
constexpr int64_t kChannelBlock = 4;

// One block of CB channels (a compile-time count, so the channel loop unrolls).
template <int CB, typename Apply>
inline void apply_block(const float* x, int64_t plane, const int32_t* off, int len, float* y, int64_t ystride,
                        int64_t ahead, const Apply& apply) {
  constexpr int n = CB;
  const float* xc[CB];  // per-channel bases, hoisted out of the pixel loop
  float* yc[CB];
  for (int c = 0; c < n; ++c) {
    xc[c] = x + c * plane;
    yc[c] = y + c * ystride;
  }
  for (int j0 = 0; j0 < len; j0 += 8) {  // groups of eight, each prefetched (bilinear_block: why)
    const int j1 = std::min(len, j0 + 8);
    if (off[j0] >= 0 && off[j1 - 1] >= 0) prefetch_group<CB>(x, plane, off, j0, j1 - 1, ahead);
    for (int j = j0; j < j1; ++j) {
      const int32_t o = off[j];
      if (o < 0) continue;
      for (int c = 0; c < n; ++c) yc[c][j] = apply(xc[c] + o, j);
    }
  }
}

template <typename Apply, typename Rim>
inline void apply_channels(const float* x, int64_t C, int64_t plane, const int32_t* off, int len, float* y,
                           int64_t ystride, int64_t ahead, const Apply& apply, const Rim& rim) {
  for (int j = 0; j < len; ++j)
    if (off[j] < 0) rim(j);
  for (int64_t c0 = 0; c0 < C; c0 += kChannelBlock) {
    const int64_t cb = C - c0 < kChannelBlock ? C - c0 : kChannelBlock;
    const float* xb = x + c0 * plane;
    float* yb = y + c0 * ystride;
    switch (cb) {  // unrolled
      case 1: apply_block<1>(xb, plane, off, len, yb, ystride, ahead, apply); break;
      case 2: apply_block<2>(xb, plane, off, len, yb, ystride, ahead, apply); break;
      case 3: apply_block<3>(xb, plane, off, len, yb, ystride, ahead, apply); break;
      default: apply_block<4>(xb, plane, off, len, yb, ystride, ahead, apply);
    }
  }
}

// Pass-1 offsets below 0: kRim and kNoTaps (cpu_simd.h).

// 0 <= i < n (n >= 0) in one unsigned compare: with two-sided tests GCC 12 gave up
// vectorising some pass-1 loops ("no vectype").
inline bool within(int32_t i, int32_t n) { return (uint32_t)i < (uint32_t)n; }

// The per-pixel math for a rim pixel, kept out of line: inlined into every unrolled
// channel-block variant it multiplied the compile time.
template <int MODE, int PAD>
__attribute__((noinline)) void rim_2d(const float* x, const Image& im, float gx, float gy, float* y,
                                      int64_t ystride) {
  sample_2d<MODE, PAD>(x, im.C, im.H, im.W, gx, gy, im.align_corners, y, ystride);
}

template <int MODE, int PAD>
__attribute__((noinline)) void rim_3d(const float* x, const Image& im, float gx, float gy, float gz, float* y,
                                      int64_t ystride) {
  sample_3d<MODE, PAD>(x, im.C, im.D, im.H, im.W, gx, gy, gz, im.align_corners, y, ystride);
}

// Runs f(IC<0>) or f(IC<1>): pass 1 specialised on align_corners, so unnormalize is one
// formula instead of both and a select.
template <typename F>
inline void with_align_corners(int align_corners, const F& f) {
  if (align_corners) f(std::integral_constant<int, 1>{});
  else f(std::integral_constant<int, 0>{});
}

// A bilinear row segment between its two passes: its coordinates and output, and pass 1's
// tables.
struct BilinearRow {
  alignas(32) float wt[2 * kChunk], wb[2 * kChunk];  // (w00, w01), (w10, w11) per pixel
  alignas(32) int32_t off[kChunk];                   // first tap's offset, or kRim / kNoTaps
  const float *gx, *gy;                              // normalised coordinates
  int len;
  float* y;       // channel 0's output segment
  int64_t ahead;  // prefetch distance (cpu_fast.cpp)
};

template <int PAD>
void bilinear_pass1(const Image& im, BilinearRow& r) {
  const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
  const int ac = im.align_corners;
  const float xin = (float)(W - 2), yin = (float)(H - 2), xout = (float)(W - 1), yout = (float)(H - 1);
  // restrict: GCC vectorises the loop only knowing that the tables and coordinates are apart
  const float* __restrict gx = r.gx;
  const float* __restrict gy = r.gy;
  float* __restrict wt = r.wt;
  float* __restrict wb = r.wb;
  int32_t* __restrict off = r.off;
  const int len = r.len;
  with_align_corners(ac, [&](auto AC) {
    for (int j = 0; j < len; ++j) {
      // Padding but not safe_coord: the tests below are on floats (NaN fails them), and only
      // pixels found inside are converted to int.  Inside, the weights equal the shared math's.
      float cx = unnormalize(gx[j], im.W, AC), cy = unnormalize(gy[j], im.H, AC);
      if (PAD != kZeros) cx = pad_coord<PAD>(cx, im.W, AC), cy = pad_coord<PAD>(cy, im.H, AC);
      const float fx = floorf(cx), fy = floorf(cy);
      const float wx0 = (fx + 1.0f) - cx, wx1 = cx - fx, wy0 = (fy + 1.0f) - cy, wy1 = cy - fy;
      wt[2 * j] = wx0 * wy0;
      wt[2 * j + 1] = wx1 * wy0;
      wb[2 * j] = wx0 * wy1;
      wb[2 * j + 1] = wx1 * wy1;
      // All four taps inside: 0 <= x0 <= W-2, 0 <= y0 <= H-2.  None: x0 < -1 or x0 > W-1 or
      // the like for y0 (with zero padding; other paddings keep coordinates inside).
      bool inside, none = false;
      if (PAD == kZeros) {
        inside = (fx >= 0.0f) & (fx <= xin) & (fy >= 0.0f) & (fy <= yin);
        none = !((fx >= -1.0f) & (fx <= xout) & (fy >= -1.0f) & (fy <= yout));
      } else {  // padded coordinates lie in [0, size - 1] (GCC vectorises this form only)
        inside = (fx <= xin) & (fy <= yin);
      }
      off[j] = inside ? (int32_t)((uint32_t)(int32_t)fy * (uint32_t)W + (uint32_t)(int32_t)fx)
                      : (none ? kNoTaps : kRim);
    }
  });
}

// Pass 2 for channels [c_begin, c_end); rim pixels, all channels, with the block at 0.
template <int PAD>
void bilinear_pass2(const float* x, const Image& im, const BilinearRow& r, int64_t ystride, int64_t c_begin,
                    int64_t c_end) {
  float* y = r.y;
  bilinear_apply(x, c_begin, c_end, im.H * im.W, im.W, r.off, r.wt, r.wb, r.len, y, ystride, r.ahead, [&](int j) {
    if (r.off[j] == kNoTaps) {
      for (int64_t c = 0; c < im.C; ++c) y[c * ystride + j] = 0.0f;
    } else {
      rim_2d<kBilinear, PAD>(x, im, r.gx[j], r.gy[j], y + j, ystride);
    }
  });
}

template <int PAD>
void bilinear_fast_2d(const float* x, const Image& im, const float* gx, const float* gy, int len,
                      float* y, int64_t ystride, int64_t ahead) {
  BilinearRow r;
  r.gx = gx, r.gy = gy, r.len = len, r.y = y, r.ahead = ahead;
  bilinear_pass1<PAD>(im, r);
  bilinear_pass2<PAD>(x, im, r, ystride, 0, im.C);
}

template <int PAD>
void nearest_fast_2d(const float* x, const Image& im, const float* gx, const float* gy, int len,
                     float* y, int64_t ystride, int64_t ahead) {
  alignas(32) int32_t off[kChunk];  // -1: outside, the output is 0
  const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
  const float xmax = (float)W, ymax = (float)H;
  with_align_corners(im.align_corners, [&](auto AC) {
    for (int j = 0; j < len; ++j) {
      const float rx = nearbyintf(source_coord<PAD>(gx[j], im.W, AC));
      const float ry = nearbyintf(source_coord<PAD>(gy[j], im.H, AC));
      const bool inside = (rx >= 0.0f) & (rx < xmax) & (ry >= 0.0f) & (ry < ymax);
      off[j] = inside ? clamp_tap((int32_t)ry, H) * W + clamp_tap((int32_t)rx, W) : -1;
    }
  });
  apply_channels(
      x, im.C, im.H * im.W, off, len, y, ystride, ahead, [](const float* p, int) { return *p; },
      [&](int j) {
        for (int64_t c = 0; c < im.C; ++c) y[c * ystride + j] = 0.0f;
      });
}

template <int PAD>
void bicubic_fast_2d(const float* x, const Image& im, const float* gx, const float* gy, int len,
                     float* y, int64_t ystride, int64_t ahead) {
  alignas(32) float wx[4][kChunk], wy[4][kChunk];
  alignas(32) int32_t off[kChunk];  // top-left tap of the 4x4 window; -1: a tap lies outside
  const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
  const float xmax = (float)(W - 2), ymax = (float)(H - 2);
  const int ac = im.align_corners;
  with_align_corners(ac, [&](auto AC) {
    for (int j = 0; j < len; ++j) {
      // Inside the image padding leaves every tap where it is, so only the rim needs it.
      const float cx = unnormalize(gx[j], im.W, AC), cy = unnormalize(gy[j], im.H, AC);
      const float fx = floorf(cx), fy = floorf(cy);
      float a[4], b[4];
      cubic_weights(cx - fx, a);
      cubic_weights(cy - fy, b);
      for (int k = 0; k < 4; ++k) {
        wx[k][j] = a[k];
        wy[k][j] = b[k];
      }
      // The 4x4 window fits <=> 1 <= floor(c) <= size - 3 <=> 1 <= c < size - 2.
      const bool inside = (cx >= 1.0f) & (cx < xmax) & (cy >= 1.0f) & (cy < ymax);
      const float sx = safe_coord(fx), sy = safe_coord(fy);
      off[j] = inside ? clamp_tap((int32_t)sy - 1, H) * W + clamp_tap((int32_t)sx - 1, W) : -1;
    }
  });
  apply_channels(
      x, im.C, im.H * im.W, off, len, y, ystride, ahead,
      [&](const float* p, int j) {
        float acc = 0.0f;
        for (int r = 0; r < 4; ++r, p += W) {
          float row = 0.0f;
          for (int k = 0; k < 4; ++k) row = fmaf(wx[k][j], p[k], row);
          acc = fmaf(wy[r][j], row, acc);
        }
        return acc;
      },
      [&](int j) { rim_2d<kBicubic, PAD>(x, im, gx[j], gy[j], y + j, ystride); });
}

template <int PAD>
void trilinear_fast_3d(const float* x, const Image& im, const float* gx, const float* gy,
                       const float* gz, int len, float* y, int64_t ystride, int64_t ahead) {
  alignas(32) float w[8][kChunk];
  alignas(32) int32_t off[kChunk];  // first tap's offset; -1: a tap lies outside
  const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
  const int ac = im.align_corners;
  with_align_corners(ac, [&](auto AC) {
    for (int j = 0; j < len; ++j) {
      const float cx = source_coord<PAD>(gx[j], im.W, AC), cy = source_coord<PAD>(gy[j], im.H, AC);
      const float cz = source_coord<PAD>(gz[j], im.D, AC);
      const float fx = floorf(cx), fy = floorf(cy), fz = floorf(cz);
      const float wx[2] = {(fx + 1.0f) - cx, cx - fx}, wy[2] = {(fy + 1.0f) - cy, cy - fy};
      const float wz[2] = {(fz + 1.0f) - cz, cz - fz};
      for (int k = 0; k < 8; ++k) w[k][j] = (wx[k & 1] * wy[(k >> 1) & 1]) * wz[k >> 2];
      const int32_t x0 = (int32_t)fx, y0 = (int32_t)fy, z0 = (int32_t)fz;
      const bool inside = within(x0, W - 1) & within(y0, H - 1) & within(z0, D - 1);  // all 8 taps
      off[j] = inside ? (clamp_tap(z0, D) * H + clamp_tap(y0, H)) * W + clamp_tap(x0, W) : -1;
    }
  });
  const int64_t HW = im.H * im.W;
  const int64_t tap[8] = {0, 1, W, W + 1, HW, HW + 1, HW + W, HW + W + 1};
  apply_channels(
      x, im.C, im.D * HW, off, len, y, ystride, ahead,
      [&](const float* p, int j) {
        float acc = 0.0f;
        for (int k = 0; k < 8; ++k) acc = fmaf(w[k][j], p[tap[k]], acc);
        return acc;
      },
      [&](int j) { rim_3d<kBilinear, PAD>(x, im, gx[j], gy[j], gz[j], y + j, ystride); });
}

template <int PAD>
void nearest_fast_3d(const float* x, const Image& im, const float* gx, const float* gy,
                     const float* gz, int len, float* y, int64_t ystride, int64_t ahead) {
  alignas(32) int32_t off[kChunk];  // -1: outside, the output is 0
  const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
  const float xmax = (float)W, ymax = (float)H, zmax = (float)D;
  with_align_corners(im.align_corners, [&](auto AC) {
    for (int j = 0; j < len; ++j) {
      const float rx = nearbyintf(source_coord<PAD>(gx[j], im.W, AC));
      const float ry = nearbyintf(source_coord<PAD>(gy[j], im.H, AC));
      const float rz = nearbyintf(source_coord<PAD>(gz[j], im.D, AC));
      const bool inside = (rx >= 0.0f) & (rx < xmax) & (ry >= 0.0f) & (ry < ymax) & (rz >= 0.0f) & (rz < zmax);
      off[j] = inside ? (clamp_tap((int32_t)rz, D) * H + clamp_tap((int32_t)ry, H)) * W + clamp_tap((int32_t)rx, W) : -1;
    }
  });
  apply_channels(
      x, im.C, im.D * im.H * im.W, off, len, y, ystride, ahead, [](const float* p, int) { return *p; },
      [&](int j) {
        for (int64_t c = 0; c < im.C; ++c) y[c * ystride + j] = 0.0f;
      });
}

// One segment (float32, fits_int32): gx/gy(/gz) hold its normalised grid coordinates; y
// points at its first output pixel in channel 0, ystride elements between channels; ahead
// is the prefetch distance (cpu_fast.cpp, tap_shift), 0 for none.
template <int MODE, int PAD>
void sample_segment_2d(const float* x, const Image& im, const float* gx, const float* gy, int len, float* y,
                       int64_t ystride, int64_t ahead) {
  if (MODE == kBilinear) bilinear_fast_2d<PAD>(x, im, gx, gy, len, y, ystride, ahead);
  else if (MODE == kNearest) nearest_fast_2d<PAD>(x, im, gx, gy, len, y, ystride, ahead);
  else bicubic_fast_2d<PAD>(x, im, gx, gy, len, y, ystride, ahead);
}

template <int MODE, int PAD>
void sample_segment_3d(const float* x, const Image& im, const float* gx, const float* gy, const float* gz,
                       int len, float* y, int64_t ystride, int64_t ahead) {
  if (MODE == kNearest) nearest_fast_3d<PAD>(x, im, gx, gy, gz, len, y, ystride, ahead);
  else trilinear_fast_3d<PAD>(x, im, gx, gy, gz, len, y, ystride, ahead);
}

}  // namespace cpu
SK_ISA_END
}  // namespace sk
