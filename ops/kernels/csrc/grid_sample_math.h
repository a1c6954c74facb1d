// The sampling math of custom.ops::AffineGrid / FusedGridSample, written once.
//
// Included by the CPU build (cpu_*.cpp) and the CUDA build (cuda_kernels.cu), so the CPU
// tests exercise the arithmetic the GPU runs.  Semantics are torch's F.affine_grid /
// F.grid_sample; coordinates follow torch's unfused CPU float32 evaluation order, so
// nearest-mode ties and floor() boundaries land where torch puts them (torch's BLAS path,
// taken for large grids, may fuse multiply-adds on FMA hosts and land an ulp away).
//
// Both builds must not contract a*b+c into fma on their own (g++ -ffp-contract=off, nvcc
// -fmad=false): the explicit fmaf calls below are the only fused operations.
#pragma once

#include "isa.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define SK_HD __host__ __device__ __forceinline__
#else
// Forced inlining: the CPU loops that call these only vectorise once they are inlined.
#define SK_HD inline __attribute__((always_inline))
#if defined(__F16C__)
#include <immintrin.h>
#endif
#endif

namespace sk {
SK_ISA_BEGIN

enum Mode : int { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Pad : int { kZeros = 0, kBorder = 1, kReflection = 2 };

// ---------------------------------------------------------------- float16 storage
// Raw IEEE binary16 bits, the same type on host and device; math is always float32.
struct half_t {
  uint16_t bits;
};

SK_HD float bits_as_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
SK_HD uint32_t float_as_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// Software conversions, used where neither F16C nor CUDA's intrinsics are available.
SK_HD float half_bits_to_float_sw(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24 is exact in float
    const float v = (float)mant * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_as_float(sign | 0x7f800000u | (mant << 13));
  return bits_as_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

SK_HD uint16_t float_to_half_bits_sw(float f) {  // round to nearest, ties to even
  const uint32_t u = float_as_bits(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
  if (a < 0x38800000u) {                        // below 2^-14: a subnormal half
    const float m = bits_as_float(a) * 16777216.0f;  // exact scaling by 2^24
    return sign | (uint16_t)rintf(m);                // rintf: ties to even
  }
  const uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
  return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

SK_HD float to_float(float v) { return v; }
SK_HD float to_float(half_t v) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(v.bits));
#elif defined(__F16C__) && !defined(__CUDACC__)
  return _cvtsh_ss(v.bits);
#else
  return half_bits_to_float_sw(v.bits);
#endif
}

template <typename T>
SK_HD T from_float(float v);
template <>
SK_HD float from_float<float>(float v) {
  return v;
}
template <>
SK_HD half_t from_float<half_t>(float v) {
  half_t h;
#if defined(__CUDA_ARCH__)
  h.bits = __half_as_ushort(__float2half_rn(v));
#elif defined(__F16C__) && !defined(__CUDACC__)
  h.bits = (uint16_t)_cvtss_sh(v, 0);  // 0: round to nearest even
#else
  h.bits = float_to_half_bits_sw(v);
#endif
  return h;
}

// ---------------------------------------------------------------- the affine grid
// Element i of torch's base grid for a dim of n samples.  torch's CPU linspace(-1, 1, n)
// computes start + step*i for the first half and end - step*(n-1-i) for the rest, compiled
// into fmas; without align_corners it then scales by (n-1)/n as two rounded steps.  A dim of
// size 1 is 0 (torch, not ONNX, which puts it at -1).
SK_HD float base_coord(int64_t i, int64_t n, int align_corners) {
  if (n <= 1) return 0.0f;
  const float step = 2.0f / (float)(n - 1);
  float r = (i < n / 2) ? fmaf(step, (float)i, -1.0f) : fmaf(-step, (float)(n - 1 - i), 1.0f);
  if (!align_corners) r = (r * (float)(n - 1)) / (float)n;
  return r;
}

// One row of theta applied to a base point, in torch's bmm order with no fma.
SK_HD float affine_row2(const float* t, float bx, float by) { return (bx * t[0] + by * t[1]) + t[2]; }
SK_HD float affine_row3(const float* t, float bx, float by, float bz) {
  return ((bx * t[0] + by * t[1]) + bz * t[2]) + t[3];
}

// ---------------------------------------------------------------- coordinates
// A non-finite normalised coordinate (NaN, +-Inf) is read as -1, as onnxruntime's GridSample
// reads it: a fused model then gives what its unfused onnxruntime original gives, in every
// mode and padding (torch's CPU kernels give NaN, 0 or an edge value depending on the mode,
// and differ from its CUDA ones).  Finite coordinates are untouched.
SK_HD float finite_or_minus_one(float g) { return fabsf(g) <= 3.402823466e+38f ? g : -1.0f; }

// [-1, 1] -> pixel index space: corner centres (align_corners) or corner edges.
// Both forms are computed and one selected: branch-free, so the CPU loops vectorise.
SK_HD float unnormalize(float g, int64_t size, int align_corners) {
  g = finite_or_minus_one(g);
  const float corners = ((g + 1.0f) / 2.0f) * (float)(size - 1);
  const float edges = ((g + 1.0f) * (float)size - 1.0f) / 2.0f;
  return align_corners ? corners : edges;
}

// Written with comparisons so the CPU loops vectorise; NaN clips to 0 (as fmaxf would).
SK_HD float clip_coord(float c, int64_t size) {
  const float hi = (float)(size - 1);
  c = c > 0.0f ? c : 0.0f;
  return c < hi ? c : hi;
}

// Below this distance from the reflection's low bound, reflect_fold gives fmodf's bits.
constexpr float kFoldExact = 4194304.0f;  // 2^22

// c reflected about lo with period 2 * span, for |c - lo| < kFoldExact and an integer span
// >= 1: fmodf's remainder and the parity of floorf(a / span) without libm, so that the CPU
// loops over it vectorise.  q = floorf(a / span) is the true quotient (a float just below
// q * span is too far from it for a / span to round up to q), so a - q*span, exact by fma,
// is fmodf's remainder; were q one above, that would be negative and adding span back exact,
// which the select does (tests/kernels/test_reflect_fold.py checks the bits against fmodf).
// The parity is q's own, as fmodf(floorf(a / span), 2) gives it; q / 2 is exact.
SK_HD float reflect_fold(float c, float lo, float span) {
  const float a = fabsf(c - lo);
  const float q = floorf(a / span);
  float extra = fmaf(-q, span, a);
  extra = extra < 0.0f ? extra + span : extra;
  const float half = q * 0.5f;
  return (floorf(half) != half ? span - extra : extra) + lo;
}

// Reflect c into [twice_low/2, twice_high/2] (bounds doubled so half-integers stay exact).
// Far away (never, in practice) the fold's quotient could be off by more than one: fmodf.
SK_HD float reflect_coord(float c, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0.0f;
  const float lo = (float)twice_low / 2.0f;
  const float span = (float)(twice_high - twice_low) / 2.0f;
  if (fabsf(c - lo) < kFoldExact) return reflect_fold(c, lo, span);
  c = fabsf(c - lo);
  const float extra = fmodf(c, span);
  const float flips = floorf(c / span);  // parity via fmodf: no int overflow for huge c
  return (fmodf(flips, 2.0f) == 0.0f) ? extra + lo : span - extra + lo;
}

// Pixel coordinates nearer the image than this fold exactly (|c - lo| < kFoldExact).
constexpr float kNearCoord = 2097152.0f;  // 2^21

// Coordinates are clamped to +-2^30 so they convert to int safely; NaN goes to -2^30.  Past
// the clamp every tap is outside any image, so a huge coordinate samples nothing, as in
// torch's CUDA kernels (safe_downgrade_to_int_range).  Bicubic weights are not clamped.
SK_HD float safe_coord(float c) {
  const float big = 1073741824.0f;
  c = c > -big ? c : -big;
  return c < big ? c : big;
}

// Padding applied to a pixel-space coordinate (torch's compute_coordinates).
template <int PAD>
SK_HD float pad_coord(float c, int64_t size, int align_corners) {
  if (PAD == kBorder) {
    c = clip_coord(c, size);
  } else if (PAD == kReflection) {
    c = align_corners ? reflect_coord(c, 0, 2 * (size - 1)) : reflect_coord(c, -1, 2 * size - 1);
    c = clip_coord(c, size);
  }
  return safe_coord(c);
}

// pad_coord for the CPU's vector loops, where |c| < kNearCoord: the same bits without
// branches.  Without safe_coord, which changes no coordinate that lands inside the image,
// the only ones callers convert to int.  A reflection of size 0 (one sample, align_corners)
// folds to NaN, which the clip makes 0, as reflect_coord's early return.
template <int PAD>
SK_HD float pad_near(float c, int64_t size, int align_corners) {
  if (PAD == kBorder) return clip_coord(c, size);
  if (PAD != kReflection) return c;
  if (align_corners) return clip_coord(reflect_fold(c, 0.0f, (float)(size - 1)), size);
  return clip_coord(reflect_fold(c, -0.5f, (float)size), size);
}

// pad_near<kReflection> of a coordinate within the image's span (|c - lo| < span), which is
// where callers find it: the fold's quotient is 0 there (a / span < 1 rounds below 1), so
// reflect_fold gives |c - lo| + lo, the same bits without its division and floors.  inside
// says whether c is there; elsewhere the result is not the padding and must not be used.
SK_HD float reflect_inside(float c, int64_t size, int align_corners, bool& inside) {
  const float lo = align_corners ? 0.0f : -0.5f, span = (float)(align_corners ? size - 1 : size);
  const float a = fabsf(c - lo);
  inside = a < span;
  return clip_coord(a + lo, size);
}

// Grid coordinate -> padded source coordinate (bilinear, nearest).
template <int PAD>
SK_HD float source_coord(float g, int64_t size, int align_corners) {
  return pad_coord<PAD>(unnormalize(g, size, align_corners), size, align_corners);
}

SK_HD bool in_range(int64_t i, int64_t n) { return i >= 0 && i < n; }

// ---------------------------------------------------------------- weights
// Linear weights of the lower and upper tap for a padded coordinate c (torch's form).
struct Linear1 {
  int64_t i0;   // lower tap; the upper one is i0 + 1
  float w0, w1; // their weights
};
SK_HD Linear1 linear_taps(float c) {
  const float f = floorf(c);
  Linear1 t;
  t.i0 = (int64_t)f;
  t.w0 = (f + 1.0f) - c;
  t.w1 = c - f;
  return t;
}

// Cubic convolution weights (Keys, A = -0.75 as torch) for fractional offset t of 4 taps.
SK_HD float cubic_near(float x, float A) { return ((A + 2.0f) * x - (A + 3.0f)) * x * x + 1.0f; }
SK_HD float cubic_far(float x, float A) { return ((A * x - 5.0f * A) * x + 8.0f * A) * x - 4.0f * A; }
SK_HD void cubic_weights(float t, float w[4]) {
  const float A = -0.75f;
  w[0] = cubic_far(t + 1.0f, A);
  w[1] = cubic_near(t, A);
  w[2] = cubic_near(1.0f - t, A);
  w[3] = cubic_far((1.0f - t) + 1.0f, A);
}

// A bicubic tap index after padding: each tap is clipped/reflected on its own (torch's
// get_value_bounded); -1 when it falls outside the image.
template <int PAD>
SK_HD int64_t cubic_tap(float pos, int64_t size, int align_corners) {
  const int64_t i = (int64_t)pad_coord<PAD>(pos, size, align_corners);
  return in_range(i, size) ? i : -1;
}

// The bilinear sum, in the order the CPU's SIMD path computes it (x-adjacent taps side by
// side in a vector, the two rows fused, then the pair added): fixed here for every build.
SK_HD float bilinear_sum(float w00, float w01, float w10, float w11, float v00, float v01, float v10,
                         float v11) {
  return fmaf(w10, v10, w00 * v00) + fmaf(w11, v11, w01 * v01);
}

// ---------------------------------------------------------------- one output pixel
// Each function samples one output location for all C channels.  x points at the image's
// first channel (plane elements apart), y at the output pixel (ystride elements between
// channels).  Out-of-image taps read as 0 (bilinear) or are skipped, as torch does.  The
// accumulation orders are the ones the CPU fast paths reproduce.

// One 2-D bilinear location: its first tap's offset (o: row y0, column x0; any sign), which of
// its four taps lie inside, and their weights.  The CPU's vector edge groups set up their rim
// lanes with it (cpu_rows.h), so they read and weigh what bilinear_2d does.
struct Bilinear4 {
  int64_t o;
  bool v00, v01, v10, v11;
  float w00, w01, w10, w11;
};
template <int PAD>
SK_HD Bilinear4 bilinear_taps(int64_t H, int64_t W, float gx, float gy, int align_corners) {
  const Linear1 tx = linear_taps(source_coord<PAD>(gx, W, align_corners));
  const Linear1 ty = linear_taps(source_coord<PAD>(gy, H, align_corners));
  const bool vx0 = in_range(tx.i0, W), vx1 = in_range(tx.i0 + 1, W);
  const bool vy0 = in_range(ty.i0, H), vy1 = in_range(ty.i0 + 1, H);
  Bilinear4 b;
  b.o = ty.i0 * W + tx.i0;
  b.v00 = vy0 && vx0, b.v01 = vy0 && vx1, b.v10 = vy1 && vx0, b.v11 = vy1 && vx1;
  b.w00 = tx.w0 * ty.w0, b.w01 = tx.w1 * ty.w0, b.w10 = tx.w0 * ty.w1, b.w11 = tx.w1 * ty.w1;
  return b;
}

template <int PAD, typename T>
SK_HD void bilinear_2d(const T* __restrict__ x, int64_t C, int64_t H, int64_t W, float gx, float gy,
                       int align_corners, T* __restrict__ y, int64_t ystride) {
  const Bilinear4 b = bilinear_taps<PAD>(H, W, gx, gy, align_corners);
  const int64_t plane = H * W, o = b.o;
  for (int64_t c = 0; c < C; ++c) {
    const T* p = x + c * plane;
    const float v00 = b.v00 ? to_float(p[o]) : 0.0f, v01 = b.v01 ? to_float(p[o + 1]) : 0.0f;
    const float v10 = b.v10 ? to_float(p[o + W]) : 0.0f, v11 = b.v11 ? to_float(p[o + W + 1]) : 0.0f;
    y[c * ystride] = from_float<T>(bilinear_sum(b.w00, b.w01, b.w10, b.w11, v00, v01, v10, v11));
  }
}

template <int PAD, typename T>
SK_HD void nearest_2d(const T* __restrict__ x, int64_t C, int64_t H, int64_t W, float gx, float gy,
                      int align_corners, T* __restrict__ y, int64_t ystride) {
  // nearbyintf rounds half to even, as torch.
  const int64_t ix = (int64_t)nearbyintf(source_coord<PAD>(gx, W, align_corners));
  const int64_t iy = (int64_t)nearbyintf(source_coord<PAD>(gy, H, align_corners));
  const bool valid = in_range(ix, W) && in_range(iy, H);
  const int64_t plane = H * W, o = iy * W + ix;
  for (int64_t c = 0; c < C; ++c) y[c * ystride] = valid ? x[c * plane + o] : from_float<T>(0.0f);
}

template <int PAD, typename T>
SK_HD void bicubic_2d(const T* __restrict__ x, int64_t C, int64_t H, int64_t W, float gx, float gy,
                      int align_corners, T* __restrict__ y, int64_t ystride) {
  // torch unnormalises without padding, then pads each of the 16 taps on its own.
  const float cx = unnormalize(gx, W, align_corners), cy = unnormalize(gy, H, align_corners);
  const float fx = floorf(cx), fy = floorf(cy);
  float wx[4], wy[4];
  cubic_weights(cx - fx, wx);
  cubic_weights(cy - fy, wy);
  int64_t xi[4], yi[4];
  for (int k = 0; k < 4; ++k) {
    xi[k] = cubic_tap<PAD>(fx - 1.0f + (float)k, W, align_corners);
    yi[k] = cubic_tap<PAD>(fy - 1.0f + (float)k, H, align_corners);
  }
  const int64_t plane = H * W;
  for (int64_t c = 0; c < C; ++c) {
    const T* p = x + c * plane;
    float acc = 0.0f;
    for (int r = 0; r < 4; ++r) {
      float row = 0.0f;
      for (int k = 0; k < 4; ++k) {  // outside taps read 0 (so a NaN weight gives NaN, as torch)
        const float v = (yi[r] >= 0 && xi[k] >= 0) ? to_float(p[yi[r] * W + xi[k]]) : 0.0f;
        row = fmaf(wx[k], v, row);
      }
      acc = fmaf(wy[r], row, acc);
    }
    y[c * ystride] = from_float<T>(acc);
  }
}

template <int PAD, typename T>
SK_HD void trilinear_3d(const T* __restrict__ x, int64_t C, int64_t D, int64_t H, int64_t W, float gx,
                        float gy, float gz, int align_corners, T* __restrict__ y, int64_t ystride) {
  const Linear1 tx = linear_taps(source_coord<PAD>(gx, W, align_corners));
  const Linear1 ty = linear_taps(source_coord<PAD>(gy, H, align_corners));
  const Linear1 tz = linear_taps(source_coord<PAD>(gz, D, align_corners));
  const bool vx[2] = {in_range(tx.i0, W), in_range(tx.i0 + 1, W)};
  const bool vy[2] = {in_range(ty.i0, H), in_range(ty.i0 + 1, H)};
  const bool vz[2] = {in_range(tz.i0, D), in_range(tz.i0 + 1, D)};
  const float wx[2] = {tx.w0, tx.w1}, wy[2] = {ty.w0, ty.w1}, wz[2] = {tz.w0, tz.w1};
  const int64_t plane = D * H * W, o = (tz.i0 * H + ty.i0) * W + tx.i0;
  for (int64_t c = 0; c < C; ++c) {
    const T* p = x + c * plane;
    float acc = 0.0f;
    for (int k = 0; k < 8; ++k) {  // taps row-major (z, y, x); weights in torch's (x*y)*z order
      const int dz = k >> 2, dy = (k >> 1) & 1, dx = k & 1;
      if (vz[dz] && vy[dy] && vx[dx])
        acc = fmaf((wx[dx] * wy[dy]) * wz[dz], to_float(p[o + (dz * H + dy) * W + dx]), acc);
    }
    y[c * ystride] = from_float<T>(acc);
  }
}

template <int PAD, typename T>
SK_HD void nearest_3d(const T* __restrict__ x, int64_t C, int64_t D, int64_t H, int64_t W, float gx,
                      float gy, float gz, int align_corners, T* __restrict__ y, int64_t ystride) {
  const int64_t ix = (int64_t)nearbyintf(source_coord<PAD>(gx, W, align_corners));
  const int64_t iy = (int64_t)nearbyintf(source_coord<PAD>(gy, H, align_corners));
  const int64_t iz = (int64_t)nearbyintf(source_coord<PAD>(gz, D, align_corners));
  const bool valid = in_range(ix, W) && in_range(iy, H) && in_range(iz, D);
  const int64_t plane = D * H * W, o = (iz * H + iy) * W + ix;
  for (int64_t c = 0; c < C; ++c) y[c * ystride] = valid ? x[c * plane + o] : from_float<T>(0.0f);
}

// Mode dispatch for one output location (callers reject 3-D bicubic).
template <int MODE, int PAD, typename T>
SK_HD void sample_2d(const T* __restrict__ x, int64_t C, int64_t H, int64_t W, float gx, float gy,
                     int align_corners, T* __restrict__ y, int64_t ystride) {
  if (MODE == kBilinear) bilinear_2d<PAD>(x, C, H, W, gx, gy, align_corners, y, ystride);
  else if (MODE == kNearest) nearest_2d<PAD>(x, C, H, W, gx, gy, align_corners, y, ystride);
  else bicubic_2d<PAD>(x, C, H, W, gx, gy, align_corners, y, ystride);
}

template <int MODE, int PAD, typename T>
SK_HD void sample_3d(const T* __restrict__ x, int64_t C, int64_t D, int64_t H, int64_t W, float gx,
                     float gy, float gz, int align_corners, T* __restrict__ y, int64_t ystride) {
  if (MODE == kNearest) nearest_3d<PAD>(x, C, D, H, W, gx, gy, gz, align_corners, y, ystride);
  else trilinear_3d<PAD>(x, C, D, H, W, gx, gy, gz, align_corners, y, ystride);
}

SK_ISA_END
}  // namespace sk
