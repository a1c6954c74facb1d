// Pass 2 of the CPU bicubic fast path: eight interior pixels at once with AVX2, sixteen (float)
// with AVX-512.
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

// One row of eight pixels: the fma chain over its four taps (weights wx), pixel k in lane k.
template <typename T>
inline __attribute__((always_inline)) __m256 bicubic_row8(const T* p, const int64_t* o, const __m256* wx) {
  const __m256 a0 = taps_pair(p, o[0], o[4]), a1 = taps_pair(p, o[1], o[5]);
  const __m256 a2 = taps_pair(p, o[2], o[6]), a3 = taps_pair(p, o[3], o[7]);
  const __m256 l01 = _mm256_unpacklo_ps(a0, a1), h01 = _mm256_unpackhi_ps(a0, a1);
  const __m256 l23 = _mm256_unpacklo_ps(a2, a3), h23 = _mm256_unpackhi_ps(a2, a3);
  const __m256 t[4] = {_mm256_shuffle_ps(l01, l23, 0x44), _mm256_shuffle_ps(l01, l23, 0xEE),
                       _mm256_shuffle_ps(h01, h23, 0x44), _mm256_shuffle_ps(h01, h23, 0xEE)};
  __m256 row = _mm256_setzero_ps();
  for (int k = 0; k < 4; ++k) row = _mm256_fmadd_ps(wx[k], t[k], row);
  return row;
}

// Eight interior pixels j.. of NC channels (planes xc[], outputs yc[], row stride W); off:
// their top-left taps; wx / wy the per-tap weight rows of pass 1.  The weights are loaded once
// for all the channels: left to the compiler, they were loaded again per channel (a store to
// the output may alias them); with the per-pixel interior test (apply_block now tests a
// vector) that was a quarter of pass 2's time (3 channels, one row, Sapphire Rapids class
// Xeon).  float16 runs this at x86-64-v4 too, float there the runs of bicubic_hex: this same
// transpose on 16 pixels in zmm registers (inserts of the 16-byte rows) ran 1.24x slower than
// 8-wide, dword gathers of each tap 2.0x.
template <int NC, typename T>
inline __attribute__((always_inline)) void bicubic_oct(const T* const* xc, T* const* yc, int64_t W, const int32_t* off,
                                                       const float* const* wx, const float* const* wy, int j) {
  __m256 wxv[4], wyv[4];
  for (int k = 0; k < 4; ++k) {
    wxv[k] = _mm256_loadu_ps(wx[k] + j);
    wyv[k] = _mm256_loadu_ps(wy[k] + j);
  }
  int64_t o[8];
  for (int k = 0; k < 8; ++k) o[k] = off[j + k];
  for (int c = 0; c < NC; ++c) {
    __m256 acc = _mm256_setzero_ps();
    for (int r = 0; r < 4; ++r) acc = _mm256_fmadd_ps(wyv[r], bicubic_row8(xc[c] + r * W, o, wxv), acc);
    store8(yc[c] + j, acc);
  }
}
#endif

#if SK_CPU_AVX512
// Sixteen interior pixels j.. of NC float channels by their runs (cpu_avx512.h plan16): each
// of the sixteen tap vectors (four rows, four taps) two permutes and a blend, against two
// inserts and four shuffles per eight pixels in bicubic_oct; the same operations per lane.
template <int NC>
inline __attribute__((always_inline)) void bicubic_hex(const float* const* xc, float* const* yc, int64_t W,
                                                       const Plan16& plan, const int32_t* place,
                                                       const float* const* wx, const float* const* wy, int j) {
  __m512 wxv[4], wyv[4];
  __m512i idx[4];
  const __m512i i0 = _mm512_loadu_si512(place);
  for (int k = 0; k < 4; ++k) {
    wxv[k] = _mm512_loadu_ps(wx[k] + j);
    wyv[k] = _mm512_loadu_ps(wy[k] + j);
    idx[k] = _mm512_add_epi32(i0, _mm512_set1_epi32(k));
  }
  for (int c = 0; c < NC; ++c) {
    __m512 acc = _mm512_setzero_ps();
    for (int r = 0; r < 4; ++r) {
      const Runs16 runs = load_runs(xc[c] + r * W, plan);
      __m512 row = _mm512_setzero_ps();
      for (int k = 0; k < 4; ++k) row = _mm512_fmadd_ps(wxv[k], taps16(runs, idx[k], plan.second), row);
      acc = _mm512_fmadd_ps(wyv[r], row, acc);
    }
    _mm512_storeu_ps(yc[c] + j, acc);
  }
}
#endif

}  // namespace cpu
SK_ISA_END
}  // namespace sk
