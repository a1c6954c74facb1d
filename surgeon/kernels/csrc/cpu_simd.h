// Pass 2 of the CPU bilinear fast path: weights applied to interior pixels.
//
// A row's two x-adjacent taps are one 8-byte load.  Four pixels of one channel then take
// 8 loads, a multiply by the top-row weights, an fma with the bottom row, and one pairwise
// add: out = fma(w10, c, w00 a) + fma(w11, d, w01 b), grid_sample_math.h's bilinear_sum.
// (On Zen 3, AVX2 gathers were slower than plain loads; this halves the loads.)  Weights
// come interleaved from pass 1: wt = (w00, w01) and wb = (w10, w11) per pixel.
#pragma once

#include <stdint.h>

#include "grid_sample_math.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SK_CPU_AVX2 1
#else
#define SK_CPU_AVX2 0
#endif

namespace sk {
namespace cpu {

// One interior pixel of one channel; p points at its top-left tap.
inline float bilinear_one(const float* p, int64_t W, const float* wt, const float* wb) {
  return bilinear_sum(wt[0], wt[1], wb[0], wb[1], p[0], p[1], p[W], p[W + 1]);
}

#if SK_CPU_AVX2
// Four interior pixels of one channel: plane p, first-tap offsets o[0..3].
inline __m128 bilinear_quad(const float* p, const int32_t* o, int64_t W, __m256 wt, __m256 wb) {
  auto pairs = [&](const float* q) {  // (tap, tap + 1) of each pixel, side by side
    __m128 lo = _mm_castpd_ps(_mm_load_sd((const double*)(q + o[0])));
    lo = _mm_loadh_pi(lo, (const __m64*)(q + o[1]));
    __m128 hi = _mm_castpd_ps(_mm_load_sd((const double*)(q + o[2])));
    hi = _mm_loadh_pi(hi, (const __m64*)(q + o[3]));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
  };
  const __m256 acc = _mm256_fmadd_ps(pairs(p + W), wb, _mm256_mul_ps(pairs(p), wt));
  const __m256 sums = _mm256_hadd_ps(acc, acc);  // (s0 s1 s0 s1 | s2 s3 s2 s3)
  return _mm256_castps256_ps128(_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(sums), 0x08)));
}
#endif

// Pixels of one output row segment for NC channels (a compile-time count: unrolled); x / y
// point at the first channel's plane and output segment.
// Interior pixels (off >= 0) are computed here; rim(j) handles the others, for all channels,
// when with_rim (the first channel block).
template <int NC, typename Rim>
inline void bilinear_block(const float* x, int64_t nc, int64_t plane, int64_t W, const int32_t* off,
                           const float* wt, const float* wb, int len, float* y, int64_t ystride,
                           bool with_rim, const Rim& rim) {
  (void)nc;
  constexpr int64_t n = NC;
  auto one = [&](int k) {
    if (off[k] >= 0) {
      for (int64_t c = 0; c < n; ++c)
        y[c * ystride + k] = bilinear_one(x + c * plane + off[k], W, wt + 2 * k, wb + 2 * k);
    } else if (with_rim) {
      rim(k);
    }
  };
  int j = 0;
#if SK_CPU_AVX2
  for (; j + 4 <= len; j += 4) {
    const int32_t* o = off + j;
    if ((o[0] | o[1] | o[2] | o[3]) < 0) {  // a rim pixel among them: one by one
      for (int k = j; k < j + 4; ++k) one(k);
      continue;
    }
    const __m256 wtv = _mm256_loadu_ps(wt + 2 * j), wbv = _mm256_loadu_ps(wb + 2 * j);
    for (int64_t c = 0; c < n; ++c) _mm_storeu_ps(y + c * ystride + j, bilinear_quad(x + c * plane, o, W, wtv, wbv));
  }
#endif
  for (; j < len; ++j) one(j);
}

// All channels, in blocks of 4 inside the pixel loop: a quad's offsets and weights are loaded
// once per block, and only 4 planes are live at a time (with 64 per pixel the TLB and L1
// thrash; blocks of 4 missed L1 26% less than blocks of 8, in fewer instructions).
template <typename Rim>
inline void bilinear_apply(const float* x, int64_t C, int64_t plane, int64_t W, const int32_t* off,
                           const float* wt, const float* wb, int len, float* y, int64_t ystride,
                           const Rim& rim) {
  for (int64_t c0 = 0; c0 < C; c0 += 4) {
    const int64_t nc = C - c0 < 4 ? C - c0 : 4;
    const float* xb = x + c0 * plane;
    float* yb = y + c0 * ystride;
    const bool first = c0 == 0;
    switch (nc) {  // unrolled
      case 1: bilinear_block<1>(xb, nc, plane, W, off, wt, wb, len, yb, ystride, first, rim); break;
      case 2: bilinear_block<2>(xb, nc, plane, W, off, wt, wb, len, yb, ystride, first, rim); break;
      case 3: bilinear_block<3>(xb, nc, plane, W, off, wt, wb, len, yb, ystride, first, rim); break;
      default: bilinear_block<4>(xb, nc, plane, W, off, wt, wb, len, yb, ystride, first, rim);
    }
  }
}

}  // namespace cpu
}  // namespace sk
