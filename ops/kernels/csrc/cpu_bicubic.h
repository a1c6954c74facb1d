// Pass 2 of the CPU bicubic fast path with AVX2: eight interior pixels of one channel at once.
//
// Each pixel's four taps of a row are one 16-byte load (8 bytes in float16, converted by
// F16C); a 4 x 8 transpose turns them into one vector per tap, pixel k in lane k, which is
// how pass 1 lays out the weights.  Every lane then runs the scalar loop's operations in its
// order (row = fma(wx[k], v, row) from 0, acc = fma(wy[r], row, acc) from 0), so the bits are
// the per-pixel math's.  Scalar, a pixel took 16 loads and 20 dependent fmas per channel.
#pragma once

#include "isa.h"

#include <stdint.h>

#include "cpu_simd.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {

#if SK_CPU_AVX2
// Pixels k and k + 4's four taps at row p (offsets o), in the low and high 128-bit lanes.
inline __attribute__((always_inline)) __m256 taps_pair(const float* p, int64_t lo, int64_t hi) {
  return _mm256_loadu2_m128(p + hi, p + lo);
}
inline __attribute__((always_inline)) __m256 taps_pair(const half_t* p, int64_t lo, int64_t hi) {
  int64_t a, b;
  memcpy(&a, p + lo, 8);
  memcpy(&b, p + hi, 8);
  return _mm256_cvtph_ps(_mm_set_epi64x(b, a));
}

// One row of eight pixels: the fma chain over its four taps, pixel k in lane k.
template <typename T>
inline __attribute__((always_inline)) __m256 bicubic_row8(const T* p, const int64_t* o, const float* const* wx,
                                                         int j) {
  const __m256 a0 = taps_pair(p, o[0], o[4]), a1 = taps_pair(p, o[1], o[5]);
  const __m256 a2 = taps_pair(p, o[2], o[6]), a3 = taps_pair(p, o[3], o[7]);
  const __m256 l01 = _mm256_unpacklo_ps(a0, a1), h01 = _mm256_unpackhi_ps(a0, a1);
  const __m256 l23 = _mm256_unpacklo_ps(a2, a3), h23 = _mm256_unpackhi_ps(a2, a3);
  const __m256 t[4] = {_mm256_shuffle_ps(l01, l23, 0x44), _mm256_shuffle_ps(l01, l23, 0xEE),
                       _mm256_shuffle_ps(h01, h23, 0x44), _mm256_shuffle_ps(h01, h23, 0xEE)};
  __m256 row = _mm256_setzero_ps();
  for (int k = 0; k < 4; ++k) row = _mm256_fmadd_ps(_mm256_loadu_ps(wx[k] + j), t[k], row);
  return row;
}

// Eight interior pixels j.. of one channel (plane p, row stride W); offsets o of their
// top-left taps; wx / wy the per-tap weight rows of pass 1.
template <typename T>
inline __attribute__((always_inline)) __m256 bicubic_oct(const T* p, int64_t W, const int64_t* o,
                                                         const float* const* wx, const float* const* wy, int j) {
  __m256 acc = _mm256_setzero_ps();
  for (int r = 0; r < 4; ++r) acc = _mm256_fmadd_ps(_mm256_loadu_ps(wy[r] + j), bicubic_row8(p + r * W, o, wx, j), acc);
  return acc;
}
#endif

}  // namespace cpu
SK_ISA_END
}  // namespace sk
