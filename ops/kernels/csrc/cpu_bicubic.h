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

// ---------------------------------------------------------------- the rim, sixteen at a time
// A group of pixels with taps outside the image (kRim) went pixel by pixel through the shared
// bicubic_2d, whose per-pixel tap padding and branches cost 35-80 ns a pixel with 3 channels
// (5.6% of 1x3x512x512 under the benchmark's warp: a quarter to a third of the call).  Here the
// sixteen pixels' taps are padded in vectors (the shared math's operations: unnormalize, floor,
// pad_near, which equals pad_coord within kNearCoord), and each tap row is a masked dword
// gather: a tap outside reads 0.0f exactly as bicubic_2d's select does, and every lane runs
// bicubic_2d's fma order, so the bits are its bits.  Pixels beyond kNearCoord stay with rim().

// unnormalize() on sixteen lanes.
template <int AC>
inline __attribute__((always_inline)) __m512 unnormalize16(__m512 g, int64_t size) {
  const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
  const __mmask16 finite = _mm512_cmp_ps_mask(_mm512_abs_ps(g), _mm512_set1_ps(3.402823466e+38f), _CMP_LE_OQ);
  g = _mm512_mask_blend_ps(finite, _mm512_set1_ps(-1.0f), g);
  if (AC) return _mm512_mul_ps(_mm512_div_ps(_mm512_add_ps(g, one), two), _mm512_set1_ps((float)(size - 1)));
  return _mm512_div_ps(_mm512_sub_ps(_mm512_mul_ps(_mm512_add_ps(g, one), _mm512_set1_ps((float)size)), one), two);
}

// clip_coord(): max / min take the second operand for NaN, which the selects' 0 and hi are.
inline __attribute__((always_inline)) __m512 clip16(__m512 c, int64_t size) {
  return _mm512_min_ps(_mm512_max_ps(c, _mm512_setzero_ps()), _mm512_set1_ps((float)(size - 1)));
}

// reflect_fold() on sixteen lanes, operation for operation.
inline __attribute__((always_inline)) __m512 reflect_fold16(__m512 c, float lo, float span) {
  const __m512 l = _mm512_set1_ps(lo), s = _mm512_set1_ps(span);
  const __m512 a = _mm512_abs_ps(_mm512_sub_ps(c, l));
  const __m512 q = _mm512_roundscale_ps(_mm512_div_ps(a, s), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 extra = _mm512_fnmadd_ps(q, s, a);  // fmaf(-q, span, a)
  extra = _mm512_mask_add_ps(extra, _mm512_cmp_ps_mask(extra, _mm512_setzero_ps(), _CMP_LT_OQ), extra, s);
  const __m512 half = _mm512_mul_ps(q, _mm512_set1_ps(0.5f));
  const __mmask16 odd =
      _mm512_cmp_ps_mask(_mm512_roundscale_ps(half, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), half, _CMP_NEQ_UQ);
  return _mm512_add_ps(_mm512_mask_sub_ps(extra, odd, s, extra), l);
}

// cubic_tap<PAD>() of integer positions within kNearCoord: the index, and whether it is inside.
template <int PAD, int AC>
inline __attribute__((always_inline)) __m512i cubic_tap16(__m512 pos, int64_t size, __mmask16& inside) {
  if (PAD == kBorder) pos = clip16(pos, size);
  if (PAD == kReflection)
    pos = clip16(AC ? reflect_fold16(pos, 0.0f, (float)(size - 1)) : reflect_fold16(pos, -0.5f, (float)size), size);
  const __m512i i = _mm512_cvttps_epi32(pos);
  inside = _mm512_cmpge_epi32_mask(i, _mm512_setzero_si512()) & _mm512_cmplt_epi32_mask(i, _mm512_set1_epi32((int32_t)size));
  return i;
}

// The padded taps of sixteen pixels: x indices and row offsets (index * W), each with the lanes
// where it is inside; near: the lanes of live within kNearCoord (the others are not sampled).
struct RimTaps16 {
  __m512i xi[4], yo[4];
  __mmask16 vx[4], vy[4], near;
};

template <int PAD, int AC>
inline __attribute__((always_inline)) RimTaps16 rim_taps16(const float* gx, const float* gy, __mmask16 live,
                                                          int64_t H, int64_t W) {
  RimTaps16 t;
  const __m512 cx = unnormalize16<AC>(_mm512_maskz_loadu_ps(live, gx), W);
  const __m512 cy = unnormalize16<AC>(_mm512_maskz_loadu_ps(live, gy), H);
  const __m512 lim = _mm512_set1_ps(kNearCoord);
  t.near = live & _mm512_cmp_ps_mask(_mm512_abs_ps(cx), lim, _CMP_LT_OQ) &
           _mm512_cmp_ps_mask(_mm512_abs_ps(cy), lim, _CMP_LT_OQ);
  // Far lanes get 0 (never sampled), so no conversion below overflows.
  const __m512 fx = _mm512_maskz_roundscale_ps(t.near, cx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512 fy = _mm512_maskz_roundscale_ps(t.near, cy, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int k = 0; k < 4; ++k) {  // fx - 1.0f + (float)k, as bicubic_2d
    const __m512 dk = _mm512_set1_ps((float)k);
    t.xi[k] = cubic_tap16<PAD, AC>(_mm512_add_ps(_mm512_sub_ps(fx, one), dk), W, t.vx[k]);
    t.yo[k] = _mm512_mullo_epi32(cubic_tap16<PAD, AC>(_mm512_add_ps(_mm512_sub_ps(fy, one), dk), H, t.vy[k]),
                                 _mm512_set1_epi32((int32_t)W));
  }
  return t;
}

// bicubic_2d's sum for the near lanes of plane p (weights wx / wy of pass 1 at the group).
inline __attribute__((always_inline)) __m512 bicubic_rim16(const float* p, const RimTaps16& t, const __m512* wx,
                                                          const __m512* wy) {
  __m512 acc = _mm512_setzero_ps();
  for (int r = 0; r < 4; ++r) {
    __m512 row = _mm512_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      const __mmask16 m = t.near & t.vy[r] & t.vx[k];
      const __m512i i = _mm512_add_epi32(t.yo[r], t.xi[k]);
      row = _mm512_fmadd_ps(wx[k], _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, i, p, 4), row);
    }
    acc = _mm512_fmadd_ps(wy[r], row, acc);
  }
  return acc;
}

// ---------------------------------------------------------------- the rim by runs (zeros)
// With zero padding a rim pixel's taps are where an interior pixel's would be, some of them
// outside: (fy - 1 + r) * W + fx - 1 + k, an element of the plane or not.  So an edge group's
// taps come from runs of the plane too (plan16's places, about lanes that may start before
// the plane), loaded with the elements outside the plane masked off (no fault), and each tap
// vector picked out by two zero-masked permutes and a blend: a tap outside its row or the
// image reads +0.0f, as the masked gathers of bicubic_rim16 read it, and the sums run in their
// order, so the bits are the same.  Pass 1 prepares the group once for all channels
// (rim_plan16); 1x256x64x64 spent ~40% of its time in the 16 gathers per channel of its edge
// groups, set up again for every block of 4 channels.  Groups whose near lanes have no tap
// inside are all +0.0f (kRimZero); groups no four runs cover keep the gathers (kRimGather).
enum : int8_t { kRimGather = 0, kRimRuns = 1, kRimZero = 2 };

struct RimPlan16 {
  int32_t start[4];           // the runs (virtual: offsets from the plane's start, maybe < 0)
  __mmask16 load[4][4];       // [row][run]: the elements of a run's load inside the plane
  __mmask16 tap[4][4];        // [row][tap]: the near lanes whose tap is inside the image
  __mmask16 second, near;     // lanes in the second pair of runs; lanes sampled here (|c| < 2^21)
  int8_t kind;
};

// The plan of edge group gx / gy (live lanes) under zero padding; its places go to place.
template <int AC>
inline void rim_plan16(const float* gx, const float* gy, __mmask16 live, int64_t H, int64_t W, RimPlan16& e,
                       int32_t* place) {
  const RimTaps16 t = rim_taps16<kZeros, AC>(gx, gy, live, H, W);
  e.near = t.near;
  e.kind = kRimGather;
  const __mmask16 any = t.near & (t.vx[0] | t.vx[1] | t.vx[2] | t.vx[3]) & (t.vy[0] | t.vy[1] | t.vy[2] | t.vy[3]);
  if (any == 0) {
    e.kind = kRimZero;
    return;
  }
  // A lane with a tap inside has fy - 1 in [-3, H) and fx - 1 in [-3, W): its first tap's
  // virtual offset fits int32 where (H + 3) * W + 3 does.
  if ((H + 4) * W >= (int64_t)INT32_MAX) return;
  const __m512i o = _mm512_add_epi32(t.yo[0], t.xi[0]);
  alignas(64) int32_t off[16];
  _mm512_store_si512(off, o);
  const int32_t span = 3;
  __m512i idx;
  uint32_t second;
  if (!place_runs16(off, o, any, 15 - span, e.start, idx, second)) return;
  _mm512_storeu_si512(place, idx);
  e.second = (__mmask16)second;
  for (int r = 0; r < 4; ++r) {
    for (int q = 0; q < 4; ++q) e.load[r][q] = run_inside16((int64_t)e.start[q] + r * W, H * W);
    for (int k = 0; k < 4; ++k) e.tap[r][k] = t.near & t.vy[r] & t.vx[k];
  }
  e.kind = kRimRuns;
}

// The sixteen sums of plane p of a kRimRuns group (idx: its places; wx / wy: its weights).
inline __attribute__((always_inline)) __m512 bicubic_rim_runs(const float* p, int64_t W, const RimPlan16& e,
                                                              __m512i idx, const __m512* wx, const __m512* wy) {
  __m512 acc = _mm512_setzero_ps();
  for (int r = 0; r < 4; ++r) {
    const Runs4 q = load_runs16(p, r * W, e.start, e.load[r]);
    const __m512 a0 = q.a0, b0 = q.b0, a1 = q.a1, b1 = q.b1;
    __m512 row = _mm512_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      const __m512i ik = _mm512_add_epi32(idx, _mm512_set1_epi32(k));
      const __mmask16 m = e.tap[r][k];
      const __m512 v = _mm512_mask_blend_ps(e.second, _mm512_maskz_permutex2var_ps(m, a0, ik, b0),
                                            _mm512_maskz_permutex2var_ps(m, a1, ik, b1));
      row = _mm512_fmadd_ps(wx[k], v, row);
    }
    acc = _mm512_fmadd_ps(wy[r], row, acc);
  }
  return acc;
}
#endif

}  // namespace cpu
SK_ISA_END
}  // namespace sk
