// Pass 2 of the CPU bilinear fast path with AVX-512: sixteen pixels of one channel at a time.
//
// Each pixel's (tap, tap + 1) pairs of the top and bottom rows come in by 64-bit gathers,
// eight pixels a gather: on a Xeon (Sapphire Rapids class) that beat 8-wide AVX2 loads and
// blends by ~5% (the loads, at about two a cycle, bound both).  Half a holds pixels 0, 1,
// 4, 5, 8, 9, 12, 13 and half b the others, so that one even / odd shuffle per 128-bit lane
// leaves the sixteen sums in order: out = fma(w10, c, w00 a) + fma(w11, d, w01 b), the
// operations of grid_sample_math.h's bilinear_sum.  A group with rim pixels, or past the
// segment's end, takes the masked form of the same (load_hex_masked, bilinear_hex<true>)
// instead of going pixel by pixel: 1x64x128x128 in 0.69 ms instead of 0.79.
#pragma once

#include "isa.h"

#include <immintrin.h>
#include <stdint.h>

namespace sk {
SK_ISA_BEGIN
namespace cpu {

// Offsets and weights of sixteen pixels, arranged for bilinear_hex.
struct Hex {
  __m256i ia, ib;             // first-tap offsets of halves a and b
  __m512 wta, wba, wtb, wbb;  // (w00, w01) and (w10, w11) pairs of halves a and b
  __mmask8 ma, mb;            // the pixels to read of each half (load_hex_masked)
};

// The pixels to read of each half: bits of pixels 0, 1, 4, 5, ... and of 2, 3, 6, 7, ...
inline void set_half_masks(Hex& q, uint32_t in) {
  q.ma = (__mmask8)((in & 0x3u) | ((in >> 2) & 0xCu) | ((in >> 4) & 0x30u) | ((in >> 6) & 0xC0u));
  q.mb = (__mmask8)(((in >> 2) & 0x3u) | ((in >> 4) & 0xCu) | ((in >> 6) & 0x30u) | ((in >> 8) & 0xC0u));
}

// Offsets of sixteen pixels split into halves a and b.
inline __attribute__((always_inline)) void set_halves(Hex& q, __m512i off) {
  const __m512i pick = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
  const __m512i ab = _mm512_permutexvar_epi32(pick, off);
  q.ia = _mm512_castsi512_si256(ab);
  q.ib = _mm512_extracti64x4_epi64(ab, 1);
}

// Sixteen interior pixels.
inline __attribute__((always_inline)) Hex load_hex(const int32_t* off, const float* wt, const float* wb) {
  Hex q;
  set_halves(q, _mm512_loadu_si512(off));
  const __m512 t0 = _mm512_loadu_ps(wt), t1 = _mm512_loadu_ps(wt + 16);
  const __m512 b0 = _mm512_loadu_ps(wb), b1 = _mm512_loadu_ps(wb + 16);
  q.wta = _mm512_shuffle_f32x4(t0, t1, 0x88);  // 128-bit lanes 0 and 2 of each: pixels 0, 1, 4, 5, ...
  q.wtb = _mm512_shuffle_f32x4(t0, t1, 0xDD);
  q.wba = _mm512_shuffle_f32x4(b0, b1, 0x88);
  q.wbb = _mm512_shuffle_f32x4(b0, b1, 0xDD);
  return q;
}

// Bit k of m moved to bits 2k and 2k + 1: a pixel mask made a mask of its weight pairs.
inline uint32_t pair_mask(uint32_t m) {
  m = (m | (m << 8)) & 0x00FF00FFu;
  m = (m | (m << 4)) & 0x0F0F0F0Fu;
  m = (m | (m << 2)) & 0x33333333u;
  m = (m | (m << 1)) & 0x55555555u;
  return m | (m << 1);
}

// Any sixteen: live, the pixels of the segment (the others are not read); in, those of them
// to sample (for bilinear_hex<true>).
inline Hex load_hex_masked(const int32_t* off, const float* wt, const float* wb, __mmask16 live, __mmask16 in) {
  Hex q;
  set_halves(q, _mm512_maskz_loadu_epi32(in, off));
  set_half_masks(q, in);
  const uint32_t m = pair_mask(live);
  const __mmask16 lo = (__mmask16)m, hi = (__mmask16)(m >> 16);
  const __m512 t0 = _mm512_maskz_loadu_ps(lo, wt), t1 = _mm512_maskz_loadu_ps(hi, wt + 16);
  const __m512 b0 = _mm512_maskz_loadu_ps(lo, wb), b1 = _mm512_maskz_loadu_ps(hi, wb + 16);
  q.wta = _mm512_shuffle_f32x4(t0, t1, 0x88);
  q.wtb = _mm512_shuffle_f32x4(t0, t1, 0xDD);
  q.wba = _mm512_shuffle_f32x4(b0, b1, 0x88);
  q.wbb = _mm512_shuffle_f32x4(b0, b1, 0xDD);
  return q;
}

// The sixteen sums of plane p (pixels outside q's masks: 0 or NaN; not to be stored).
template <bool kMasked>
inline __attribute__((always_inline)) __m512 bilinear_hex(const float* p, int64_t W, const Hex& q) {
  auto pairs = [](__m256i i, __mmask8 m, const float* base) {
    const double* b = (const double*)base;
    return _mm512_castpd_ps(kMasked ? _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, i, b, 4)
                                    : _mm512_i32gather_pd(i, b, 4));
  };
  const float* r = p + W;
  const __m512 a = _mm512_fmadd_ps(pairs(q.ia, q.ma, r), q.wba, _mm512_mul_ps(pairs(q.ia, q.ma, p), q.wta));
  const __m512 b = _mm512_fmadd_ps(pairs(q.ib, q.mb, r), q.wbb, _mm512_mul_ps(pairs(q.ib, q.mb, p), q.wtb));
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xDD));
}

}  // namespace cpu
SK_ISA_END
}  // namespace sk
