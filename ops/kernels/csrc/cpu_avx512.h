// Pass 2 of the CPU fast paths with AVX-512: bilinear by gathers (sixteen pixels of one channel
// at a time; with many channels by runs and edge groups, below) and bicubic by runs of the plane.
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

#include <algorithm>

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

// ---------------------------------------------------------------- windows of sixteen pixels
// Pass 2 without gathers: a mild warp keeps a group of sixteen pixels within a few runs of 16
// elements of a plane, one per input row it crosses (a rotation moves the pixels along a row by
// about a step each and changes rows a few times).  Pass 1 plans a group once (plan16): up to
// four runs, each about the first pixel the ones before it left out, and each pixel's place in
// its pair of runs; pass 2 then loads the runs of a tap row and picks each tap vector out by
// two 2-source permutes and a blend (taps16), for every channel: four plain loads and three
// shuffles instead of two inserts and four shuffles per eight pixels (bicubic_oct), for
// bicubic's sixteen taps: 0.86-0.87x the time with 3 to 256 channels.  Nearest keeps its
// eight-pixel windows, and bilinear with few channels its gathers: runs there took 0.95-1.21x
// (nearest) and 0.97-1.17x (bilinear) the time, the planning in pass 1 outweighing what pass 2
// gained (Sapphire Rapids class Xeon, one thread); bilinear with 16 or more channels plans a
// row once for all of them (below).  A copy of the same elements: the bits are the
// other paths'.  Runs start inside the plane (clamped), so no load leaves it.
struct Plan16 {
  int32_t start[4];  // runs 0 and 1 (first pair), 2 and 3 (second); start[0] < 0: no plan
  __mmask16 second;  // the pixels in the second pair
};

// Moves each run of a plan to a start on a 64-byte line (phase: x's element offset within its
// line) where all its pixels still fit: a load that splits no line costs one pass of a load
// port, not two, and split loads competed with the permutes for the same cycles (many-channel
// bilinear's pass 2 hot in L1: 8 split loads 10 cycles per channel, 8 permutes 8, both 20; with
// every run aligned 14).  Under the benchmark's warp 77% of the runs can move.  lanes: the pixels
// of each run; idx: their places, updated.  Any start within [0, last] reads the same elements.
inline __attribute__((always_inline)) __m512i align_runs(__m512i o, const __mmask16 (&lanes)[4], int32_t room,
                                                        int32_t last, int32_t phase, Plan16& plan, __m512i idx) {
  const __m512i rooms = _mm512_set1_epi32(room);
  for (int r = 0; r < 4; ++r) {
    const int32_t s = plan.start[r];
    if (lanes[r] == 0 || ((s + phase) & 15) == 0) continue;
    const int32_t top = ((s + room + phase) & ~15) - phase;  // the highest line start <= s + room
    for (int32_t a = top; a >= top - 16; a -= 16) {
      if (a < 0 || a > last) continue;
      const __m512i d = _mm512_sub_epi32(o, _mm512_set1_epi32(a));
      if ((__mmask16)(lanes[r] & ~_mm512_cmple_epu32_mask(d, rooms)) != 0) continue;
      plan.start[r] = a;
      idx = _mm512_mask_mov_epi32(idx, lanes[r], (r & 1) ? _mm512_add_epi32(d, _mm512_set1_epi32(16)) : d);
      break;
    }
  }
  return idx;
}

// Plans sixteen pixels whose x taps span span + 1 elements (off: their first taps, all >= 0
// or no plan); last: the highest start a run may have (every tap row of it inside the plane).
// Writes each pixel's place to idx (0-15 in the first run of its pair, 16-31 in the other);
// false if it takes more than four runs.  Most groups fit each half's runs about its first and
// last pixels; the rest (a row change next to a half's end) take up to four runs, each about
// the first pixel the ones before left out.  Clamping never leaves a pixel out of its own run:
// an interior pixel's taps end at least span elements before the plane's end.  phase >= 0:
// runs then move to line starts where they can (align_runs).
inline bool plan16(const int32_t* off, int span, int32_t last, Plan16& plan, int32_t* idx, int32_t phase = -1) {
  const __m512i o = _mm512_loadu_si512(off);
  if (_mm512_movepi32_mask(o) != 0 || last < 0) return false;
  const int32_t room = 15 - span, c = room / 2;  // a run about a pixel: room on both sides
  const __m512i rooms = _mm512_set1_epi32(room);
  auto clamp = [&](int32_t o) { return std::max<int32_t>(0, std::min<int32_t>(o - c, last)); };
  {  // first the usual case, without a loop: each half in the runs about its first and last pixels
    const int32_t s[4] = {clamp(off[0]), clamp(off[7]), clamp(off[8]), clamp(off[15])};
    const __m512i lo = _mm512_mask_set1_epi32(_mm512_set1_epi32(s[0]), 0xFF00, s[2]);
    const __m512i hi = _mm512_mask_set1_epi32(_mm512_set1_epi32(s[1]), 0xFF00, s[3]);
    const __m512i dlo = _mm512_sub_epi32(o, lo), dhi = _mm512_sub_epi32(o, hi);
    const __mmask16 in_lo = _mm512_cmple_epu32_mask(dlo, rooms);
    if ((__mmask16)(in_lo | _mm512_cmple_epu32_mask(dhi, rooms)) == 0xFFFF) {
      __m512i place = _mm512_mask_blend_epi32(in_lo, _mm512_add_epi32(dhi, _mm512_set1_epi32(16)), dlo);
      for (int r = 0; r < 4; ++r) plan.start[r] = s[r];
      plan.second = 0xFF00;
      if (phase >= 0) {
        const __mmask16 lanes[4] = {(__mmask16)(in_lo & 0x00FF), (__mmask16)(~in_lo & 0x00FF),
                                    (__mmask16)(in_lo & 0xFF00), (__mmask16)(~in_lo & 0xFF00)};
        place = align_runs(o, lanes, room, last, phase, plan, place);
      }
      _mm512_storeu_si512(idx, place);
      return true;
    }
  }
  __m512i place = _mm512_setzero_si512();
  uint32_t left = 0xFFFF, second = 0;
  __mmask16 lanes[4] = {0, 0, 0, 0};
  for (int r = 0; r < 4; ++r) {
    if (left == 0) {
      plan.start[r] = plan.start[0];  // loaded, never picked
      continue;
    }
    const int32_t s0 = clamp(off[__builtin_ctz(left)]);
    const __m512i d = _mm512_sub_epi32(o, _mm512_set1_epi32(s0));
    const __mmask16 in = (__mmask16)(left & _mm512_cmple_epu32_mask(d, rooms));
    place = _mm512_mask_mov_epi32(place, in, (r & 1) ? _mm512_add_epi32(d, _mm512_set1_epi32(16)) : d);
    if (r >= 2) second |= in;
    left &= ~(uint32_t)in;
    plan.start[r] = s0;
    lanes[r] = in;
  }
  if (left != 0) return false;
  if (phase >= 0) {
    place = align_runs(o, lanes, room, last, phase, plan, place);
    for (int r = 1; r < 4; ++r)
      if (lanes[r] == 0) plan.start[r] = plan.start[0];
  }
  _mm512_storeu_si512(idx, place);
  plan.second = (__mmask16)second;
  return true;
}

// The four runs of one tap row (p: the plane at that row's offset).
struct Runs16 {
  __m512 a0, b0, a1, b1;
};
inline __attribute__((always_inline)) Runs16 load_runs(const float* p, const Plan16& plan) {
  return Runs16{_mm512_loadu_ps(p + plan.start[0]), _mm512_loadu_ps(p + plan.start[1]),
                _mm512_loadu_ps(p + plan.start[2]), _mm512_loadu_ps(p + plan.start[3])};
}

// Tap k along x of the sixteen pixels (idx: plan16's places plus k).
inline __attribute__((always_inline)) __m512 taps16(const Runs16& r, __m512i idx, __mmask16 second) {
  return _mm512_mask_blend_ps(second, _mm512_permutex2var_ps(r.a0, idx, r.b0),
                              _mm512_permutex2var_ps(r.a1, idx, r.b1));
}


// ---------------------------------------------------------------- bilinear by runs (many channels)
// With 16 or more channels a row's plan is made once and used by every channel: sixteen
// interior pixels' four tap vectors (top and bottom row, taps x and x + 1) come from the runs
// of plan16 (span 1) by two permutes and a blend each, eight plain loads per channel instead of
// four 8-pair gathers (hot in L1: 0.94x the time).  The weights of a planned group are laid
// out planar by pass 1 (planar_pairs: w00 of the sixteen, then w01; w10, then w11), and every
// lane runs bilinear_sum's operations, so the bits are the gathers'.

// Sixteen (first, second) pairs at w made planar in place: the sixteen firsts, then the seconds.
inline void planar_pairs(float* w) {
  const __m512 t0 = _mm512_loadu_ps(w), t1 = _mm512_loadu_ps(w + 16);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512 e = _mm512_permutex2var_ps(t0, even, t1), o = _mm512_permutex2var_ps(t0, odd, t1);
  _mm512_storeu_ps(w, e);
  _mm512_storeu_ps(w + 16, o);
}

// A planned group's places (taps x and x + 1) and planar weights, loaded once for its channels.
struct Quad16 {
  __m512i i0, i1;
  __m512 w00, w01, w10, w11;
};
inline __attribute__((always_inline)) Quad16 load_quad16(const int32_t* place, const float* wt, const float* wb) {
  Quad16 q;
  q.i0 = _mm512_loadu_si512(place);
  q.i1 = _mm512_add_epi32(q.i0, _mm512_set1_epi32(1));
  q.w00 = _mm512_loadu_ps(wt), q.w01 = _mm512_loadu_ps(wt + 16);
  q.w10 = _mm512_loadu_ps(wb), q.w11 = _mm512_loadu_ps(wb + 16);
  return q;
}

// The sixteen sums of plane p: fma(w10, c, w00 a) + fma(w11, d, w01 b), as bilinear_hex.
inline __attribute__((always_inline)) __m512 bilinear_runs(const float* p, int64_t W, const Plan16& plan,
                                                          const Quad16& q) {
  const Runs16 top = load_runs(p, plan), bottom = load_runs(p + W, plan);
  const __m512 a = taps16(top, q.i0, plan.second), b = taps16(top, q.i1, plan.second);
  const __m512 c = taps16(bottom, q.i0, plan.second), d = taps16(bottom, q.i1, plan.second);
  return _mm512_add_ps(_mm512_fmadd_ps(q.w10, c, _mm512_mul_ps(q.w00, a)),
                       _mm512_fmadd_ps(q.w11, d, _mm512_mul_ps(q.w01, b)));
}

// ---------------------------------------------------------------- bilinear edge groups
// A group of sixteen that is not all interior (rim pixels, pixels with no taps, the segment's
// end) goes through four masked 32-bit gathers per channel: each lane's first tap (any sign:
// masked lanes are never read), the taps of the four that lie inside, and planar weights.
// Rim lanes are set up by pass 1 with the per-pixel math's own functions (bilinear_lane), the
// others read as 0, as bilinear_2d reads them: the same operations on the same values, so the
// bits of the per-pixel route, which these pixels took one by one, all channels at once, from
// the first channel block (12% of 1x256x64x64's time for its 2% rim pixels).
struct Edge16 {
  __mmask16 tap[4];  // lanes whose tap (y0 x0, y0 x1, y1 x0, y1 x1) is inside the image
  __mmask16 store;   // lanes computed (interior and rim)
  __mmask16 none;    // lanes set to 0 (kNoTaps)
  // By runs (edge_runs16) where runs is set, else by the gathers:
  __mmask16 second;      // lanes in the second pair of runs
  __mmask16 load[2][4];  // [tap row][run]: the elements of a run's load inside the plane
  int32_t start[4];      // the runs (virtual: offsets from the plane's start, maybe < 0)
  bool runs;
};

// Up to four runs of 16 that cover the lanes in any (o: their first taps' virtual offsets, off:
// the same in memory), each starting room / 2 before the first lane left, a lane in it when its
// taps (room - 1 past the first at most) fit: idx holds each lane's place (+16 in the second run
// of a pair), start the runs, second the lanes of the second pair.  False when four do not cover
// them all.  Shared by bilinear's edge groups (edge_runs16) and bicubic's rim groups (rim_plan16).
inline bool place_runs16(const int32_t* off, __m512i o, uint32_t any, int32_t room, int32_t (&start)[4],
                         __m512i& idx, uint32_t& second) {
  const int32_t c = room / 2;
  const __m512i rooms = _mm512_set1_epi32(room);
  idx = _mm512_setzero_si512();
  second = 0;
  uint32_t left = any;
  for (int r = 0; r < 4; ++r) {
    if (left == 0) {
      start[r] = start[0];  // loaded, never picked
      continue;
    }
    const int32_t s = off[__builtin_ctz(left)] - c;
    const __m512i d = _mm512_sub_epi32(o, _mm512_set1_epi32(s));
    const __mmask16 in = (__mmask16)(left & _mm512_cmple_epu32_mask(d, rooms));
    idx = _mm512_mask_mov_epi32(idx, in, (r & 1) ? _mm512_add_epi32(d, _mm512_set1_epi32(16)) : d);
    if (r >= 2) second |= in;
    left &= ~(uint32_t)in;
    start[r] = s;
  }
  return left == 0;
}

// The elements base + i (i < 16) of a run with 0 <= base + i < plane.
inline __mmask16 run_inside16(int64_t base, int64_t plane) {
  const int64_t lo = std::min<int64_t>(16, std::max<int64_t>(0, -base));
  const int64_t hi = std::min<int64_t>(16, std::max<int64_t>(0, plane - base));
  return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// A row's four runs (virtual offsets start[q] + rw from plane p), the elements outside the
// plane masked off (load[q]); the address is formed in unsigned arithmetic, as a run may start
// before the plane.
struct Runs4 {
  __m512 a0, b0, a1, b1;
};
inline __attribute__((always_inline)) Runs4 load_runs16(const float* p, int64_t rw, const int32_t (&start)[4],
                                                        const __mmask16 (&load)[4]) {
  auto at = [&](int64_t i) { return (const float*)((uintptr_t)p + (uintptr_t)(i * (int64_t)sizeof(float))); };
  return {_mm512_maskz_loadu_ps(load[0], at(start[0] + rw)), _mm512_maskz_loadu_ps(load[1], at(start[1] + rw)),
          _mm512_maskz_loadu_ps(load[2], at(start[2] + rw)), _mm512_maskz_loadu_ps(load[3], at(start[3] + rw))};
}

// An edge group by runs, as bicubic's rim groups (cpu_bicubic.h rim_plan16): a lane with a tap
// inside has its first tap's virtual offset (fy * W + fx, fx and fy from -1) at place, so up
// to four runs of 16 about the lanes cover every tap; pass 2 loads them with the elements
// outside the plane masked off and picks each tap vector out by two zero-masked permutes and
// a blend: a tap outside the image reads +0.0f, as the gathers read it, and the sums run in
// bilinear_edge's order: the same bits.  Four masked 16-lane gathers per channel cost more than
// eight masked loads and eight permutes.  any: the lanes with a tap inside.  On success place
// holds the lanes' places in their runs (as plan16's).
inline bool edge_runs16(int32_t* place, __mmask16 any, int64_t H, int64_t W, Edge16& e) {
  e.runs = false;
  if (any == 0 || (H + 2) * W >= (int64_t)INT32_MAX) return false;
  __m512i idx;
  uint32_t second;
  if (!place_runs16(place, _mm512_loadu_si512(place), any, 14, e.start, idx, second)) return false;  // span 1
  _mm512_storeu_si512(place, idx);
  e.second = (__mmask16)second;
  for (int r = 0; r < 2; ++r)
    for (int q = 0; q < 4; ++q) e.load[r][q] = run_inside16((int64_t)e.start[q] + r * W, H * W);
  e.runs = true;
  return true;
}

// bilinear_edge's sums of an edge group by runs (idx: its places).
inline __attribute__((always_inline)) __m512 bilinear_edge_runs(const float* p, int64_t W, const Edge16& e, __m512i idx,
                                                               const __m512 (&w)[4]) {
  const __m512i i1 = _mm512_add_epi32(idx, _mm512_set1_epi32(1));
  __m512 v[4];
  for (int r = 0; r < 2; ++r) {
    const Runs4 q = load_runs16(p, r * W, e.start, e.load[r]);
    const __m512 a0 = q.a0, b0 = q.b0, a1 = q.a1, b1 = q.b1;
    const __mmask16 m0 = e.tap[2 * r], m1 = e.tap[2 * r + 1];
    v[2 * r] = _mm512_mask_blend_ps(e.second, _mm512_maskz_permutex2var_ps(m0, a0, idx, b0),
                                    _mm512_maskz_permutex2var_ps(m0, a1, idx, b1));
    v[2 * r + 1] = _mm512_mask_blend_ps(e.second, _mm512_maskz_permutex2var_ps(m1, a0, i1, b0),
                                        _mm512_maskz_permutex2var_ps(m1, a1, i1, b1));
  }
  return _mm512_add_ps(_mm512_fmadd_ps(w[2], v[2], _mm512_mul_ps(w[0], v[0])),
                       _mm512_fmadd_ps(w[3], v[3], _mm512_mul_ps(w[1], v[1])));
}

// The groups of sixteen a row's pass 1 prepared (cpu_rows.h BilinearRow::groups16).
struct Groups16 {
  const Plan16* plan;    // all-interior groups by runs (start[0] < 0: by gathers)
  const int32_t* place;  // their places, or an edge group's first taps
  const Edge16* edge;    // groups that are not all interior
};

// The sixteen sums of plane p of an edge group (first taps o, planar weights).
inline __attribute__((always_inline)) __m512 bilinear_edge(const float* p, int64_t W, const Edge16& e, __m512i o,
                                                          const __m512 (&w)[4]) {
  const __m512i o1 = _mm512_add_epi32(o, _mm512_set1_epi32(1)), ow = _mm512_add_epi32(o, _mm512_set1_epi32((int32_t)W));
  const __m512i ow1 = _mm512_add_epi32(ow, _mm512_set1_epi32(1));
  const __m512 z = _mm512_setzero_ps();
  const __m512 a = _mm512_mask_i32gather_ps(z, e.tap[0], o, p, 4), b = _mm512_mask_i32gather_ps(z, e.tap[1], o1, p, 4);
  const __m512 c = _mm512_mask_i32gather_ps(z, e.tap[2], ow, p, 4), d = _mm512_mask_i32gather_ps(z, e.tap[3], ow1, p, 4);
  return _mm512_add_ps(_mm512_fmadd_ps(w[2], c, _mm512_mul_ps(w[0], a)), _mm512_fmadd_ps(w[3], d, _mm512_mul_ps(w[1], b)));
}

}  // namespace cpu
SK_ISA_END
}  // namespace sk
