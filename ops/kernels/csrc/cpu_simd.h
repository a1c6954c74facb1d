// Pass 2 of the CPU bilinear fast path: weights applied to interior pixels.
//
// A row's two x-adjacent taps are one 8-byte load (4 bytes in float16).  Pixels of one
// channel then take a multiply by the top-row weights, an fma with the bottom row, and one
// pairwise add: out = fma(w10, c, w00 a) + fma(w11, d, w01 b), grid_sample_math.h's
// bilinear_sum.  Weights come interleaved from pass 1: wt = (w00, w01) and wb = (w10, w11)
// per pixel.  With AVX-512 (float32), sixteen pixels at a time by gathers (cpu_avx512.h);
// with AVX2, eight by broadcast loads and blends (float16: the pairs of four pixels put
// together in one vector and converted by F16C).  Both split the pixels into halves whose
// pairwise sums one even / odd shuffle leaves in order: on a Sapphire Rapids class Xeon the
// former 4-pixel vmovhps / vinsertf128 / vhaddps / vpermpd form spent its time on the shuffle
// port (1x3x512x512, one thread: 0.79 ms; AVX2 now 0.71, AVX-512 0.55, with pass 1 in 512-bit
// vectors).  On Zen 3, AVX2 gathers were slower than plain loads.
#pragma once

#include "isa.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <type_traits>

#include "grid_sample_math.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define SK_CPU_AVX2 1
#else
#define SK_CPU_AVX2 0
#endif

#if defined(__AVX512F__)
#include "cpu_avx512.h"
#define SK_CPU_AVX512 1
#else
#define SK_CPU_AVX512 0
#endif

namespace sk {
SK_ISA_BEGIN
namespace cpu {

// Pass-1 offsets below 0: the pixel has a tap outside (kRim: the per-pixel math decides, for
// every channel), or every tap outside, so that with zero padding it is 0 (kNoTaps; padding
// that moves coordinates never produces it, as they then stay inside).
constexpr int32_t kRim = -1, kNoTaps = -2;
// Within pass 1 only: a reflected pixel that needs the full fold (cpu_rows.h fold_the_rest).
constexpr int32_t kFold = -3;

// Hint that the line holding base[i] is read soon.  Any i will do: a prefetch never faults,
// and the address is formed as an integer, so none outside the image is ever dereferenced.
// Always inlined: GCC deems a function that only prefetches free of effects, and drops
// calls to it.
template <typename T>
inline __attribute__((always_inline)) void prefetch_at(const T* base, int64_t i) {
  __builtin_prefetch((const void*)((uintptr_t)base + (uintptr_t)(i * (int64_t)sizeof(T))));
}

// The lines of pixels first and last of a group, ahead elements on, in NC planes.
template <int NC, typename T>
inline __attribute__((always_inline)) void prefetch_group(const T* x, int64_t plane, const int32_t* off,
                                                          int first, int last, int64_t ahead) {
  if (ahead == 0) return;
  for (int64_t c = 0; c < NC; ++c) {
    prefetch_at(x + c * plane, off[first] + ahead);
    prefetch_at(x + c * plane, off[last] + ahead);
  }
}

// One interior pixel of one channel; p points at its top-left tap.
template <typename T>
inline T bilinear_one(const T* p, int64_t W, const float* wt, const float* wb) {
  return from_float<T>(bilinear_sum(wt[0], wt[1], wb[0], wb[1], to_float(p[0]), to_float(p[1]), to_float(p[W]),
                                    to_float(p[W + 1])));
}

#if SK_CPU_AVX2
// The (tap, tap + 1) pairs of four pixels in plane q, offsets a, b (low lane) and c, d (high
// lane): broadcast loads merged by blends, so no uop needs the shuffle port (vmovhps and
// vinsertf128 both do, and were pass 2's bottleneck).
inline __attribute__((always_inline)) __m256 pairs4(const float* q, int64_t a, int64_t b, int64_t c, int64_t d) {
  auto pair = [&](int64_t o) { return _mm256_castpd_ps(_mm256_broadcast_sd((const double*)(q + o))); };
  const __m256 ab = _mm256_blend_ps(pair(a), pair(b), 0x0C);
  const __m256 cd = _mm256_blend_ps(pair(c), pair(d), 0xC0);
  return _mm256_blend_ps(ab, cd, 0xF0);
}

// float16: the four 4-byte pairs side by side, converted together (the same lane order).
inline __attribute__((always_inline)) __m256 pairs4(const half_t* q, int64_t a, int64_t b, int64_t c, int64_t d) {
  auto pair = [&](int64_t o) {
    int32_t v;
    memcpy(&v, q + o, 4);
    return v;
  };
  return _mm256_cvtph_ps(_mm_setr_epi32(pair(a), pair(b), pair(c), pair(d)));
}

// Eight values to the output, rounded to nearest even in float16 as from_float.
inline __attribute__((always_inline)) void store8(float* y, __m256 v) { _mm256_storeu_ps(y, v); }
inline __attribute__((always_inline)) void store8(half_t* y, __m256 v) {
  _mm_storeu_si128((__m128i*)y, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

// Nearest: eight pixels of a plane by one or two vector loads instead of eight scalar ones.
// Each pixel's element lies among the 8 from the first pixel's (window lo) or among the 8 up
// to the last one's (window hi): a mild warp moves a pixel along a row by a step or none and
// changes rows at most once in eight.  Pass 1 finds such groups once per row (window8); pass
// 2 picks each channel's elements out by permutes.  A copy: the bits are the scalar loop's.
// sel: a pixel's place in its window (low 3 bits), the sign bit set when that is window hi.
inline __attribute__((always_inline)) bool window8(const int32_t* off, int64_t plane, int32_t& lo, int32_t& hi,
                                                   int32_t* sel) {
  const int64_t first = off[0], last = (int64_t)off[7] - 7;
  if (first < 0 || last < 0 || first + 8 > plane) return false;
  const __m256i o = _mm256_loadu_si256((const __m256i*)off), high = _mm256_set1_epi32(~7);
  const __m256i dlo = _mm256_sub_epi32(o, _mm256_set1_epi32((int32_t)first));
  const __m256i dhi = _mm256_sub_epi32(o, _mm256_set1_epi32((int32_t)last));
  const __m256i in_lo = _mm256_cmpeq_epi32(_mm256_and_si256(dlo, high), _mm256_setzero_si256());
  const __m256i in_hi = _mm256_cmpeq_epi32(_mm256_and_si256(dhi, high), _mm256_setzero_si256());
  if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(in_lo, in_hi))) != 0xFF) return false;
  // window hi where not lo: its place with the sign bit set
  const __m256i from_hi = _mm256_or_si256(dhi, _mm256_set1_epi32(INT32_MIN));
  _mm256_storeu_si256((__m256i*)sel, _mm256_blendv_epi8(from_hi, dlo, in_lo));
  lo = (int32_t)first;
  hi = (int32_t)last;
  return true;
}

#if SK_CPU_AVX512
// window8 for two groups of eight at once (off: 16 pixels), the same results: lo[k] < 0 where
// group k takes no windows (its sel and hi then unused).  Eight-wide, the scalar tests of
// off[0] and off[7] right after pass 1 stored them were 15% of NearestRow::pass1.
inline __attribute__((always_inline)) void window16(const int32_t* off, int64_t plane, int32_t* lo, int32_t* hi,
                                                    int32_t* sel) {
  const __m512i o = _mm512_loadu_si512(off);
  const __m512i first = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8), o);
  const __m512i last = _mm512_sub_epi32(
      _mm512_permutexvar_epi32(_mm512_setr_epi32(7, 7, 7, 7, 7, 7, 7, 7, 15, 15, 15, 15, 15, 15, 15, 15), o),
      _mm512_set1_epi32(7));
  const __m512i dlo = _mm512_sub_epi32(o, first), dhi = _mm512_sub_epi32(o, last);
  const __m512i high = _mm512_set1_epi32(~7);
  const __mmask16 in_lo = _mm512_testn_epi32_mask(dlo, high), in_hi = _mm512_testn_epi32_mask(dhi, high);
  // window8's first >= 0, last >= 0 and first + 8 <= plane, per lane of each half
  const int32_t most = (int32_t)std::min<int64_t>(plane - 8, INT32_MAX);
  const __m512i zero = _mm512_setzero_si512();
  const __mmask16 ok = (__mmask16)(in_lo | in_hi) & _mm512_cmpge_epi32_mask(first, zero) &
                       _mm512_cmpge_epi32_mask(last, zero) & _mm512_cmple_epi32_mask(first, _mm512_set1_epi32(most));
  _mm512_storeu_si512(sel, _mm512_mask_blend_epi32(in_lo, _mm512_or_si512(dhi, _mm512_set1_epi32(INT32_MIN)), dlo));
  const __m128i f1 = _mm512_extracti32x4_epi32(first, 2), l1 = _mm512_extracti32x4_epi32(last, 2);
  lo[0] = (ok & 0xFF) == 0xFF ? _mm_cvtsi128_si32(_mm512_castsi512_si128(first)) : -1;
  hi[0] = _mm_cvtsi128_si32(_mm512_castsi512_si128(last));
  lo[1] = (ok >> 8) == 0xFF ? _mm_cvtsi128_si32(f1) : -1;
  hi[1] = _mm_cvtsi128_si32(l1);
}
#endif

// The eight elements of plane p that window8 found, stored at y.
inline __attribute__((always_inline)) void copy_window(float* y, const float* p, int32_t lo, int32_t hi,
                                                       __m256i sel) {
  const __m256 a = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p + lo), sel);
  const __m256 b = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p + hi), sel);
  _mm256_storeu_ps(y, _mm256_blendv_ps(a, b, _mm256_castsi256_ps(sel)));
}

// float16 moved as 32-bit integers (widened, permuted, narrowed): every bit pattern passes.
inline __attribute__((always_inline)) void copy_window(half_t* y, const half_t* p, int32_t lo, int32_t hi,
                                                       __m256i sel) {
  auto window = [&](int32_t at) {
    return _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(p + at))), sel);
  };
  const __m256i v = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(window(lo)),
                                                         _mm256_castsi256_ps(window(hi)), _mm256_castsi256_ps(sel)));
  _mm_storeu_si128((__m128i*)y, _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), 0x08)));
}

// Eight interior pixels of one channel: plane p, first-tap offsets o[0..7].  Half a holds
// pixels 0, 1, 4, 5 and half b 2, 3, 6, 7, so that one even / odd shuffle of the two leaves
// the eight sums in order; wa / wb are the weights arranged alike (top row, bottom row).
struct Oct {
  int64_t o[8];
  __m256 wta, wba, wtb, wbb;
};

inline __attribute__((always_inline)) Oct load_oct(const int32_t* off, const float* wt, const float* wb) {
  Oct q;
  for (int k = 0; k < 8; ++k) q.o[k] = off[k];
  q.wta = _mm256_loadu2_m128(wt + 8, wt);
  q.wtb = _mm256_loadu2_m128(wt + 12, wt + 4);
  q.wba = _mm256_loadu2_m128(wb + 8, wb);
  q.wbb = _mm256_loadu2_m128(wb + 12, wb + 4);
  return q;
}

template <typename T>
inline __attribute__((always_inline)) __m256 bilinear_oct(const T* p, int64_t W, const Oct& q) {
  const int64_t* o = q.o;
  const T* r = p + W;
  const __m256 a = _mm256_fmadd_ps(pairs4(r, o[0], o[1], o[4], o[5]), q.wba,
                                   _mm256_mul_ps(pairs4(p, o[0], o[1], o[4], o[5]), q.wta));
  const __m256 b = _mm256_fmadd_ps(pairs4(r, o[2], o[3], o[6], o[7]), q.wbb,
                                   _mm256_mul_ps(pairs4(p, o[2], o[3], o[6], o[7]), q.wtb));
  return _mm256_add_ps(_mm256_shuffle_ps(a, b, 0x88), _mm256_shuffle_ps(a, b, 0xDD));
}
#endif

// Pixels of one output row segment for NC channels (a compile-time count: unrolled); x / y
// point at the first channel's plane and output segment.  Interior pixels (off >= 0) are
// computed here, and kNoTaps ones set to 0; rim(j) handles the kRim ones, for all channels,
// when with_rim (the first channel block).  ahead (0: none): the offset from a tap to where
// the same pixel's taps lie a few output rows on; those lines are prefetched (cpu_fast.cpp).
// groups (AVX-512, float, many channels; else null): the row's groups of sixteen as pass 1
// prepared them (cpu_avx512.h Groups16): all-interior ones by runs or gathers, the others as
// edge groups, which do their rim pixels themselves (rim() is then not called).
struct Groups16;

template <int NC, typename T, typename Rim>
inline void bilinear_block(const T* x, int64_t plane, int64_t W, const int32_t* off, const float* wt,
                           const float* wb, int len, T* y, int64_t ystride, int64_t ahead, bool with_rim,
                           const Rim& rim, const Groups16* groups) {
  constexpr int64_t n = NC;
  auto one = [&](int k) {
    if (off[k] >= 0) {
      for (int64_t c = 0; c < n; ++c)
        y[c * ystride + k] = bilinear_one(x + c * plane + off[k], W, wt + 2 * k, wb + 2 * k);
    } else if (off[k] == kNoTaps) {
      for (int64_t c = 0; c < n; ++c) y[c * ystride + k] = from_float<T>(0.0f);
    } else if (with_rim) {
      rim(k);
    }
  };
  int j = 0;
#if SK_CPU_AVX512
  if (std::is_same<T, float>::value) {  // float16 takes the AVX2 form below
    // Groups of sixteen.  One with other pixels (or past len) takes the masked route: kNoTaps
    // pixels are stored as 0, kRim ones left to rim().
    const float* xf = (const float*)x;
    float* yf = (float*)y;
    for (; j < len; j += 16) {
      if (j + 16 <= len) {
        const __m512i ov = _mm512_loadu_si512(off + j);
        if (_mm512_movepi32_mask(ov) == 0) {
          if (groups != nullptr && groups->plan[j / 16].start[0] >= 0) {
            const Plan16& plan = groups->plan[j / 16];
            const Quad16 q = load_quad16(groups->place + j, wt + 2 * j, wb + 2 * j);
            prefetch_group<NC>(xf, plane, off, j, j + 15, ahead);
            for (int64_t c = 0; c < n; ++c)
              _mm512_storeu_ps(yf + c * ystride + j, bilinear_runs(xf + c * plane, W, plan, q));
            continue;
          }
          const Hex q = load_hex(off + j, wt + 2 * j, wb + 2 * j);
          prefetch_group<NC>(xf, plane, off, j, j + 15, ahead);
          for (int64_t c = 0; c < n; ++c)
            _mm512_storeu_ps(yf + c * ystride + j, bilinear_hex<false>(xf + c * plane, W, q));
          continue;
        }
      }
      if (groups != nullptr) {  // an edge group
        const Edge16& e = groups->edge[j / 16];
        const __m512i o = _mm512_loadu_si512(groups->place + j);
        const __m512 w[4] = {_mm512_loadu_ps(wt + 2 * j), _mm512_loadu_ps(wt + 2 * j + 16), _mm512_loadu_ps(wb + 2 * j),
                             _mm512_loadu_ps(wb + 2 * j + 16)};
        if ((e.tap[0] | e.tap[1] | e.tap[2] | e.tap[3]) == 0) {  // no tap inside: the sums of zeros, no gathers
          const __m512 z = _mm512_setzero_ps();
          const __m512 v = _mm512_add_ps(_mm512_fmadd_ps(w[2], z, _mm512_mul_ps(w[0], z)),
                                         _mm512_fmadd_ps(w[3], z, _mm512_mul_ps(w[1], z)));
          for (int64_t c = 0; c < n; ++c) {
            float* yc = yf + c * ystride + j;
            _mm512_mask_storeu_ps(yc, e.store, v);
            _mm512_mask_storeu_ps(yc, e.none, z);
          }
          continue;
        }
        if (e.runs) {
          for (int64_t c = 0; c < n; ++c) {
            float* yc = yf + c * ystride + j;
            _mm512_mask_storeu_ps(yc, e.store, bilinear_edge_runs(xf + c * plane, W, e, o, w));
            _mm512_mask_storeu_ps(yc, e.none, _mm512_setzero_ps());
          }
          continue;
        }
        for (int64_t c = 0; c < n; ++c) {
          float* yc = yf + c * ystride + j;
          _mm512_mask_storeu_ps(yc, e.store, bilinear_edge(xf + c * plane, W, e, o, w));
          _mm512_mask_storeu_ps(yc, e.none, _mm512_setzero_ps());
        }
        continue;
      }
      const __mmask16 live = len - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (len - j)) - 1);
      const __m512i ov = _mm512_maskz_loadu_epi32(live, off + j);
      const __mmask16 in = _mm512_mask_cmpge_epi32_mask(live, ov, _mm512_setzero_si512());
      const __mmask16 none = _mm512_mask_cmpeq_epi32_mask(live, ov, _mm512_set1_epi32(kNoTaps));
      if (in == 0) {  // nothing to gather (a gather costs the same whatever its mask)
        for (int64_t c = 0; c < n; ++c) _mm512_mask_storeu_ps(yf + c * ystride + j, none, _mm512_setzero_ps());
      } else {
        const Hex q = load_hex_masked(off + j, wt + 2 * j, wb + 2 * j, live, in);
        for (int64_t c = 0; c < n; ++c) {
          float* yc = yf + c * ystride + j;
          _mm512_mask_storeu_ps(yc, in, bilinear_hex<true>(xf + c * plane, W, q));
          _mm512_mask_storeu_ps(yc, none, _mm512_setzero_ps());
        }
      }
      if (with_rim)
        for (uint32_t m = (uint32_t)(live & ~in & ~none); m != 0; m &= m - 1) rim(j + __builtin_ctz(m));
    }
  }
#endif
#if SK_CPU_AVX2
  for (; j + 8 <= len; j += 8) {
    const __m256i ov = _mm256_loadu_si256((const __m256i*)(off + j));
    if (_mm256_movemask_ps(_mm256_castsi256_ps(ov)) != 0) {  // not all interior: one by one
      for (int k = j; k < j + 8; ++k) one(k);
      continue;
    }
    const Oct q = load_oct(off + j, wt + 2 * j, wb + 2 * j);
    prefetch_group<NC>(x, plane, off, j, j + 7, ahead);
    for (int64_t c = 0; c < n; ++c) store8(y + c * ystride + j, bilinear_oct(x + c * plane, W, q));
  }
#else
  for (; j + 8 <= len; j += 8) {
    if (off[j] >= 0 && off[j + 7] >= 0) prefetch_group<NC>(x, plane, off, j, j + 7, ahead);
    for (int k = j; k < j + 8; ++k) one(k);
  }
#endif
  for (; j < len; ++j) one(j);
}

// Channels [c_begin, c_end), in blocks of 4 inside the pixel loop: a quad's offsets and
// weights are loaded once per block, and only 4 planes are live at a time (with 64 per pixel
// the TLB and L1 thrash; blocks of 4 missed L1 26% less than blocks of 8, in fewer
// instructions).  x / y: channel 0's plane and output segment.  The block at channel 0 calls
// rim(j).
template <typename T, typename Rim>
inline void bilinear_apply(const T* x, int64_t c_begin, int64_t c_end, int64_t plane, int64_t W,
                           const int32_t* off, const float* wt, const float* wb, int len, T* y, int64_t ystride,
                           int64_t ahead, const Rim& rim, const Groups16* groups = nullptr) {
  for (int64_t c0 = c_begin; c0 < c_end; c0 += 4) {
    const int64_t nc = c_end - c0 < 4 ? c_end - c0 : 4;
    const T* xb = x + c0 * plane;
    T* yb = y + c0 * ystride;
    const bool first = c0 == 0;
    switch (nc) {  // unrolled
      case 1: bilinear_block<1>(xb, plane, W, off, wt, wb, len, yb, ystride, ahead, first, rim, groups);
        break;
      case 2: bilinear_block<2>(xb, plane, W, off, wt, wb, len, yb, ystride, ahead, first, rim, groups);
        break;
      case 3: bilinear_block<3>(xb, plane, W, off, wt, wb, len, yb, ystride, ahead, first, rim, groups);
        break;
      default: bilinear_block<4>(xb, plane, W, off, wt, wb, len, yb, ystride, ahead, first, rim, groups);
    }
  }
}

}  // namespace cpu
SK_ISA_END
}  // namespace sk
