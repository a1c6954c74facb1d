// CPU samplers for one segment of an output row (up to kChunk consecutive output pixels), in
// two passes, so that a tile of rows can run pass 1 once and pass 2 per block of channels.
//
// Pass 1 computes each pixel's weights and, when all its taps lie inside the image, the offset
// of its first tap, in loops of the shared scalar math that the compiler vectorises (their
// exact spelling matters: GCC 12 gives up on some equivalent forms; check -fopt-info-vec after
// editing them).  Reflection folds there without libm (pad_near) for pixels within 2^21 of
// the image, and not at all for those inside it (reflect_inside); the rest go to the
// per-pixel math.  Pass 2 applies the weights to a range of channels with plain loads
// (bilinear: cpu_simd.h; bicubic: cpu_bicubic.h; nearest: by eight-element windows that pass
// 1 found, cpu_simd.h window8, over all of a tile's rows per call), and prefetches, per eight
// pixels, the lines the same pixels will read a few output rows on (ahead: cpu_fast.cpp).
// Pixels with a tap outside the image go through the per-pixel functions of
// grid_sample_math.h, the code the CUDA kernels run; those with every tap outside under zero
// padding are simply 0.  Both routes give the same bits (same operations, same fma order),
// which the tests check by switching the fast paths off.  T is float or half_t (float16 is
// converted as it is loaded and rounded as it is stored, as the per-pixel math does).
// Callers (cpu_fast.cpp) run them within int32 offsets only.
#pragma once

#include "isa.h"

#include <stdint.h>

#include <algorithm>
#include <type_traits>

#include "cpu_bicubic.h"
#include "cpu_simd.h"
#include "grid_sample_math.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {

constexpr int kChunk = 256;  // pixels per segment: the per-pixel tables stay in L1
constexpr int64_t kExactFloatInt = int64_t(1) << 24;  // float holds every integer up to this

// The input image of one batch item (D = 1 for 2-D).
struct Image {
  int64_t C, D, H, W;
  int align_corners;
  int32_t phase = -1;  // x's element offset within its 64-byte line, or -1: not known (plan16)
};

// A row segment between its two passes: its normalised coordinates (gz: 3-D only), its
// output (channel 0; ystride elements between channels) and its prefetch distance.
template <typename T>
struct Segment {
  const float *gx, *gy, *gz;
  int len;
  T* y;
  int64_t ahead;
};

// Clamped so the offset arithmetic cannot overflow: the compiler then evaluates it for
// every lane of a vectorised loop and selects afterwards.  Only in-range taps are used.
inline int32_t clamp_tap(int32_t i, int32_t size) { return std::max(0, std::min(i, size - 1)); }

// Whether pass 1 may pad these pixel coordinates with pad_near (reflection folds exactly only
// so near the image; the others go to the per-pixel math).
inline bool is_near(float cx, float cy, float cz = 0.0f) {
  return (fabsf(cx) < kNearCoord) & (fabsf(cy) < kNearCoord) & (fabsf(cz) < kNearCoord);
}

// After a reflection pass that padded the pixels inside the image and marked the rest kFold
// (left of them): the groups of sixteen that hold any of them again, whole, with redo(j, n)
// (the full fold, in vectors; it gives every pixel its bits, the unfolded ones included).
// Before, those pixels went one by one through the scalar fold, or all the row's pixels again
// when more than 1 in 32 needed it: the warp's few rows that leave the image were done twice
// (11% of 8x3x256x256 nearest reflection's time).
template <typename Redo>
inline void fold_the_rest(int left, int len, const int32_t* off, const Redo& redo) {
  for (int j = 0; left > 0 && j < len; j += 16) {
    const int n = std::min(16, len - j);
    int here = 0;
    for (int k = 0; k < n; ++k) here += off[j + k] == kFold;
    if (here > 0) redo(j, n), left -= here;
  }
}

// Runs f(IC<0>) or f(IC<1>): pass 1 specialised on align_corners, so unnormalize is one
// formula instead of both and a select.
template <typename F>
inline void with_align_corners(int align_corners, const F& f) {
  if (align_corners) f(std::integral_constant<int, 1>{});
  else f(std::integral_constant<int, 0>{});
}

// The per-pixel math for a kRim pixel, all channels, kept out of line: inlined into every
// unrolled channel-block variant it multiplied the compile time.
template <int MODE, int PAD, int DIMS, typename T>
__attribute__((noinline)) void rim_pixel(const T* x, const Image& im, const Segment<T>& s, int j, int64_t ystride) {
  if constexpr (DIMS == 2)
    sample_2d<MODE, PAD>(x, im.C, im.H, im.W, s.gx[j], s.gy[j], im.align_corners, s.y + j, ystride);
  else
    sample_3d<MODE, PAD>(x, im.C, im.D, im.H, im.W, s.gx[j], s.gy[j], s.gz[j], im.align_corners, s.y + j, ystride);
}

// One output of a pass-2 apply, rounded to T.
inline void store_one(float* y, float v) { *y = v; }
inline void store_one(half_t* y, float v) { *y = from_float<half_t>(v); }

// No group form (group or edge of apply_block).
struct NoGroup {
  template <typename... Args>
  int operator()(Args...) const { return 0; }
};

// Pass 2 of bicubic and trilinear for NC channels (unrolled): pixels with off[j] >= 0
// get apply(p, j) per channel, p pointing at the pixel's first tap in that channel's plane;
// kNoTaps pixels are set to 0 and, when with_rim (the first block), kRim pixels go to rim(j).
// group(IC<NC>, xc, yc, j) may do eight interior pixels j.. of the NC channels with planes xc[]
// and outputs yc[] at once, or sixteen (it returns how many: 0, 8 or 16); edge(IC<NC>, xc, yc,
// j, with_rim) likewise a group that is not all interior, rim pixels included (0: pixel by pixel).
template <int NC, typename T, typename Apply, typename Group, typename Edge, typename Rim>
inline void apply_block(const T* x, int64_t plane, const int32_t* off, int len, T* y, int64_t ystride, int64_t ahead,
                        bool with_rim, const Apply& apply, const Group& group, const Edge& edge, const Rim& rim) {
  const T* xc[NC];  // per-channel bases, hoisted out of the pixel loop
  T* yc[NC];
  for (int c = 0; c < NC; ++c) {
    xc[c] = x + c * plane;
    yc[c] = y + c * ystride;
  }
  for (int j0 = 0, j1; j0 < len; j0 = j1) {  // groups of eight, each prefetched (bilinear_block: why)
    j1 = std::min(len, j0 + 8);
    if (off[j0] >= 0 && off[j1 - 1] >= 0) prefetch_group<NC>(x, plane, off, j0, j1 - 1, ahead);
#if SK_CPU_AVX2  // one vector test for the eight, not eight compares and branches
    const bool interior =
        j1 - j0 == 8 && _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(off + j0)))) == 0;
#else
    bool interior = j1 - j0 == 8;
    for (int j = j0; j < j1; ++j) interior &= off[j] >= 0;
#endif
    const int done = interior ? group(std::integral_constant<int, NC>{}, xc, yc, j0)
                              : edge(std::integral_constant<int, NC>{}, xc, yc, j0, with_rim);
    if (done > 0) {
      j1 = j0 + done;
      continue;
    }
    for (int j = j0; j < j1; ++j) {
      const int32_t o = off[j];
      if (o >= 0) {
        for (int c = 0; c < NC; ++c) store_one(yc[c] + j, apply(xc[c] + o, j));
      } else if (o == kNoTaps) {
        for (int c = 0; c < NC; ++c) yc[c][j] = from_float<T>(0.0f);
      } else if (with_rim) {
        rim(j);
      }
    }
  }
}

// Channels [c_begin, c_end) in blocks of 4, inner to the pixel loop: a pixel's weights are
// loaded once per block, and only 4 planes are live at a time (64 planes per pixel thrashed
// the TLB and L1).  The block at channel 0 calls rim(j).
constexpr int64_t kChannelBlock = 4;

template <typename T, typename Apply, typename Group, typename Edge, typename Rim>
inline void apply_channels(const T* x, int64_t c_begin, int64_t c_end, int64_t plane, const int32_t* off, int len,
                           T* y, int64_t ystride, int64_t ahead, const Apply& apply, const Group& group,
                           const Edge& edge, const Rim& rim) {
  for (int64_t c0 = c_begin; c0 < c_end; c0 += kChannelBlock) {
    const int64_t cb = std::min(c_end - c0, kChannelBlock);
    const T* xb = x + c0 * plane;
    T* yb = y + c0 * ystride;
    const bool first = c0 == 0;
    switch (cb) {  // unrolled
      case 1: apply_block<1>(xb, plane, off, len, yb, ystride, ahead, first, apply, group, edge, rim); break;
      case 2: apply_block<2>(xb, plane, off, len, yb, ystride, ahead, first, apply, group, edge, rim); break;
      case 3: apply_block<3>(xb, plane, off, len, yb, ystride, ahead, first, apply, group, edge, rim); break;
      default: apply_block<4>(xb, plane, off, len, yb, ystride, ahead, first, apply, group, edge, rim);
    }
  }
}

// ---------------------------------------------------------------- bilinear (2-D)
// From this many channels on, AVX-512 float bilinear prepares its groups of sixteen once per
// row for all the channels (groups16): all-interior ones by runs (cpu_avx512.h bilinear_runs),
// the others as edge groups (bilinear_edge).  With 3 channels the per-row setup cost more
// than it saved: 1x3x512x512 took 1.12x the time with edge groups.
constexpr int64_t kGroupsChannelsMin = 16;

template <int PAD, typename T>
struct BilinearRow : Segment<T> {
  alignas(32) float wt[2 * kChunk], wb[2 * kChunk];  // (w00, w01), (w10, w11) per pixel
  alignas(32) int32_t off[kChunk];                   // first tap's offset, or kRim / kNoTaps
#if SK_CPU_AVX512  // float, many channels: groups of sixteen prepared for pass 2 (groups16)
  alignas(64) int32_t place[kChunk];  // planned groups: places in their runs; edge groups: first taps
  Plan16 plan[kChunk / 16];           // all-interior groups; start[0] < 0: by gathers
  Edge16 edge[kChunk / 16];           // the other groups
  bool prepared = false;
#endif

  void pass1(const Image& im) {
    with_align_corners(im.align_corners, [&](auto AC) {
      const float *gx = this->gx, *gy = this->gy;
      const int len = this->len;
      if (PAD != kReflection) {
        tables<AC, false>(im, gx, gy, wt, wb, off, len);
        return;
      }
      fold_the_rest(tables<AC, true>(im, gx, gy, wt, wb, off, len), len, off, [&](int j, int n) {
        tables<AC, false>(im, gx + j, gy + j, wt + 2 * j, wb + 2 * j, off + j, n);
      });
    });
#if SK_CPU_AVX512
    prepared = std::is_same<T, float>::value && im.C >= kGroupsChannelsMin;
    if (prepared) groups16(im);
#endif
  }

#if SK_CPU_AVX512
  // Pass 2's groups of sixteen: all-interior ones planned by runs (else gathered, their weights
  // left in pairs), the others set up as edge groups (cpu_avx512.h Edge16), their rim lanes by
  // the per-pixel math's bilinear_taps.  Planned and edge groups get planar weights.
  void groups16(const Image& im) {
    const int32_t last = (int32_t)std::min<int64_t>(im.H * im.W - im.W - 16, INT32_MAX);  // row 1 too
    const int len = this->len;
    for (int g = 0, j = 0; j < len; ++g, j += 16) {
      const int n = std::min(16, len - j);
      if (n == 16 && _mm512_movepi32_mask(_mm512_loadu_si512(off + j)) == 0) {
        if (!plan16(off + j, 1, last, plan[g], place + j, im.phase)) {
          plan[g].start[0] = -1;
          continue;
        }
        planar_pairs(wt + 2 * j);
        planar_pairs(wb + 2 * j);
        continue;
      }
      planar_pairs(wt + 2 * j);
      planar_pairs(wb + 2 * j);
      Edge16& e = edge[g];
      uint32_t tap[4] = {0, 0, 0, 0}, store = 0, none = 0;
      for (int k = 0; k < 16; ++k) {
        const uint32_t bit = 1u << k;
        const int32_t o = k < n ? off[j + k] : kNoTaps;
        place[j + k] = o >= 0 ? o : 0;
        if (o >= 0) {
          tap[0] |= bit, tap[1] |= bit, tap[2] |= bit, tap[3] |= bit, store |= bit;
        } else if (o == kNoTaps) {
          none |= k < n ? bit : 0;
        } else {
          const Bilinear4 b = bilinear_taps<PAD>(im.H, im.W, this->gx[j + k], this->gy[j + k], im.align_corners);
          if (b.v00 | b.v01 | b.v10 | b.v11) place[j + k] = (int32_t)b.o;  // then within the plane's rows -1..H
          tap[0] |= b.v00 ? bit : 0, tap[1] |= b.v01 ? bit : 0, tap[2] |= b.v10 ? bit : 0, tap[3] |= b.v11 ? bit : 0;
          store |= bit;
          wt[2 * j + k] = b.w00, wt[2 * j + 16 + k] = b.w01, wb[2 * j + k] = b.w10, wb[2 * j + 16 + k] = b.w11;
        }
      }
      for (int t = 0; t < 4; ++t) e.tap[t] = (__mmask16)tap[t];
      e.store = (__mmask16)store, e.none = (__mmask16)none;
      edge_runs16(place + j, e.tap[0] | e.tap[1] | e.tap[2] | e.tap[3], im.H, im.W, e);
    }
  }
#endif

  // kUnfolded (reflection only): coordinates within the image's span padded without the fold
  // (reflect_inside), the others marked kFold and counted.
  template <int AC, bool kUnfolded>
  static int tables(const Image& im, const float* __restrict gx, const float* __restrict gy, float* __restrict wt,
                    float* __restrict wb, int32_t* __restrict off, int len) {
    // restrict: GCC vectorises the loop only knowing that the tables and coordinates are apart
    const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
    const float xin = (float)(W - 2), yin = (float)(H - 2), xout = (float)(W - 1), yout = (float)(H - 1);
    int left = 0;
    for (int j = 0; j < len; ++j) {
      // The tests below are on floats, and only pixels found inside are converted to int.
      // Inside, the weights equal the shared math's.
      float cx = unnormalize(gx[j], im.W, AC), cy = unnormalize(gy[j], im.H, AC);
      bool near = is_near(cx, cy);
      if (kUnfolded) {
        bool in_x, in_y;
        cx = reflect_inside(cx, im.W, AC, in_x), cy = reflect_inside(cy, im.H, AC, in_y);
        near &= in_x & in_y;
        left += !near;
      } else if (PAD != kZeros) {
        cx = pad_near<PAD>(cx, im.W, AC), cy = pad_near<PAD>(cy, im.H, AC);
      }
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
        inside = (fx <= xin) & (fy <= yin) & (PAD == kBorder || near);
      }
      const int32_t miss = kUnfolded && !near ? kFold : (none ? kNoTaps : kRim);
      off[j] = inside ? (int32_t)((uint32_t)(int32_t)fy * (uint32_t)W + (uint32_t)(int32_t)fx) : miss;
    }
    return left;
  }

  void pass2(const T* x, const Image& im, int64_t ystride, int64_t c_begin, int64_t c_end) const {
    const Groups16* groups = nullptr;
#if SK_CPU_AVX512
    const Groups16 sixteens{plan, place, edge};
    if (prepared) groups = &sixteens;
#endif
    bilinear_apply(x, c_begin, c_end, im.H * im.W, im.W, off, wt, wb, this->len, this->y, ystride, this->ahead,
                   [&](int j) { rim_pixel<kBilinear, PAD, 2>(x, im, *this, j, ystride); }, groups);
  }
};

// ---------------------------------------------------------------- nearest (2-D and 3-D)
template <int PAD, typename T, int DIMS>
struct NearestRow : Segment<T> {
  alignas(64) int32_t off[kChunk];  // the tap's offset; kNoTaps: outside, 0; kRim: far, reflected
#if SK_CPU_AVX2
  alignas(64) int32_t sel[kChunk];  // groups of eight by windows (window8): places in them
  int32_t lo[kChunk / 8], hi[kChunk / 8];  // and their starts; lo < 0: pixel by pixel
#endif

  void pass1(const Image& im) {
    with_align_corners(im.align_corners, [&](auto AC) {
      const float *gx = this->gx, *gy = this->gy, *gz = this->gz;
      const int len = this->len;
      // 2-D planes of up to 2^24 elements: offsets in float arithmetic, exact there
      const bool exact = DIMS == 2 && im.H * im.W <= kExactFloatInt;
      auto some = [&](int j, int n) {
        const float* z = DIMS == 3 ? gz + j : nullptr;
        if (exact) return offsets<AC, true>(im, gx + j, gy + j, z, off + j, n);
        offsets<AC, false>(im, gx + j, gy + j, z, off + j, n);
      };
      if (PAD != kReflection) return some(0, len);
      fold_the_rest(exact ? unfolded<AC, true>(im, gx, gy, gz, off, len) : unfolded<AC, false>(im, gx, gy, gz, off, len),
                    len, off, some);
    });
#if SK_CPU_AVX2
    const int64_t plane = im.D * im.H * im.W;
    int g = 0;
#if SK_CPU_AVX512
    for (; g + 2 <= this->len / 8; g += 2) window16(off + 8 * g, plane, lo + g, hi + g, sel + 8 * g);
#endif
    for (; g < this->len / 8; ++g)
      if (!window8(off + 8 * g, plane, lo[g], hi[g], sel + 8 * g)) lo[g] = -1;
    if (this->len % 8) lo[this->len / 8] = -1;
#endif
  }

  // kFloat (2-D, planes of up to 2^24 elements): the offset ry * W + rx in float, exact there,
  // one multiply, add and conversion instead of two conversions, clamps and an integer multiply
  // per pixel (vpmulld: two uops).
  template <int AC, bool kFloat>
  static void offsets(const Image& im, const float* __restrict gx, const float* __restrict gy,
                      const float* __restrict gz, int32_t* __restrict off, int len) {
    const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
    const float xmax = (float)W, ymax = (float)H, zmax = (float)D;
    for (int j = 0; j < len; ++j) {
      const float ux = unnormalize(gx[j], im.W, AC), uy = unnormalize(gy[j], im.H, AC);
      const float rx = nearbyintf(pad_near<PAD>(ux, im.W, AC));
      const float ry = nearbyintf(pad_near<PAD>(uy, im.H, AC));
      const bool in2 = (rx >= 0.0f) & (rx < xmax) & (ry >= 0.0f) & (ry < ymax);
      if constexpr (DIMS == 2) {  // (a 2-D form of the 3-D one: GCC 12 vectorised that only)
        const bool near = PAD != kReflection || is_near(ux, uy);
        if (kFloat)
          off[j] = (int32_t)(in2 & near ? ry * xmax + rx : (near ? (float)kNoTaps : (float)kRim));
        else
          off[j] = in2 & near ? clamp_tap((int32_t)ry, H) * W + clamp_tap((int32_t)rx, W) : (near ? kNoTaps : kRim);
      } else {
        const float uz = unnormalize(gz[j], im.D, AC);
        const bool near = PAD != kReflection || is_near(ux, uy, uz);
        const float rz = nearbyintf(pad_near<PAD>(uz, im.D, AC));
        const bool inside = in2 & (rz >= 0.0f) & (rz < zmax) & near;
        off[j] = inside ? (clamp_tap((int32_t)rz, D) * H + clamp_tap((int32_t)ry, H)) * W + clamp_tap((int32_t)rx, W)
                        : (near ? kNoTaps : kRim);
      }
    }
  }

  // Reflection, first for pixels whose coordinates lie within the image's span, padded
  // without the fold (reflect_inside); the others are marked kFold.  Returns their count.
  // kFloat: as offsets'.
  template <int AC, bool kFloat>
  static int unfolded(const Image& im, const float* __restrict gx, const float* __restrict gy,
                      const float* __restrict gz, int32_t* __restrict off, int len) {
    const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
    const float xmax = (float)W;
    int left = 0;
    for (int j = 0; j < len; ++j) {
      const float ux = unnormalize(gx[j], im.W, AC), uy = unnormalize(gy[j], im.H, AC);
      bool in_x, in_y;
      const float rx = nearbyintf(reflect_inside(ux, im.W, AC, in_x));
      const float ry = nearbyintf(reflect_inside(uy, im.H, AC, in_y));
      if constexpr (DIMS == 2) {
        const bool fits = in_x & in_y & is_near(ux, uy);
        if (kFloat)
          off[j] = (int32_t)(fits ? ry * xmax + rx : (float)kFold);
        else
          off[j] = fits ? clamp_tap((int32_t)ry, H) * W + clamp_tap((int32_t)rx, W) : kFold;
        left += !fits;
      } else {
        const float uz = unnormalize(gz[j], im.D, AC);
        bool in_z;
        const float rz = nearbyintf(reflect_inside(uz, im.D, AC, in_z));
        const bool fits = in_x & in_y & in_z & is_near(ux, uy, uz);
        off[j] = fits ? (clamp_tap((int32_t)rz, D) * H + clamp_tap((int32_t)ry, H)) * W + clamp_tap((int32_t)rx, W)
                      : kFold;
        left += !fits;
      }
    }
    return left;
  }

  void pass2(const T* x, const Image& im, int64_t ystride, int64_t c_begin, int64_t c_end) const {
    copy_rows(this, 1, x, im, ystride, c_begin, c_end);
  }

  // Pass 2 of nrows rows (one, or a tile's) for channels [c_begin, c_end) in blocks of
  // kChannelBlock, one call per block over all the rows.  Against a call per row through
  // apply_channels (Zen 3, one thread): 0.70-0.74x the time with 64-256 channels, 0.82-0.89x
  // with 3, float32 and float16.  Part of that is prefetching less: a window prefetches one
  // line per channel, not two (none at all: 0.93x on 1x3x512x512 but 1.25x on 8x3x256x256,
  // whose 12 MB outgrow the cache this VM gets).
  static void copy_rows(const NearestRow* rows, int nrows, const T* x, const Image& im, int64_t ystride,
                        int64_t c_begin, int64_t c_end) {
    for (int64_t c0 = c_begin; c0 < c_end; c0 += kChannelBlock) {
      switch (std::min(c_end - c0, kChannelBlock)) {  // unrolled
        case 1: copy_block<1>(rows, nrows, x, im, ystride, c0); break;
        case 2: copy_block<2>(rows, nrows, x, im, ystride, c0); break;
        case 3: copy_block<3>(rows, nrows, x, im, ystride, c0); break;
        default: copy_block<4>(rows, nrows, x, im, ystride, c0);
      }
    }
  }

  // The channel-block switch above and the pixel-by-pixel body below repeat apply_channels'
  // and apply_block's on purpose: sharing them through a generic lambda (for_channel_blocks,
  // one_by_one) measured 1.02-1.08x the time with 64-256 channels, the same bits.
  template <int NC>
  static void copy_block(const NearestRow* rows, int nrows, const T* x, const Image& im, int64_t ystride,
                         int64_t c0) {
    const int64_t plane = im.D * im.H * im.W;
    const T* xc[NC];
    for (int c = 0; c < NC; ++c) xc[c] = x + (c0 + c) * plane;
    for (int r = 0; r < nrows; ++r) {
      const NearestRow& row = rows[r];
      const int32_t* off = row.off;
      T* yc[NC];
      for (int c = 0; c < NC; ++c) yc[c] = row.y + (c0 + c) * ystride;
      auto pixel = [&](int k) {
        const int32_t o = off[k];
        if (o >= 0) {
          for (int c = 0; c < NC; ++c) yc[c][k] = xc[c][o];
        } else if (o == kNoTaps) {
          for (int c = 0; c < NC; ++c) yc[c][k] = from_float<T>(0.0f);
        } else if (c0 == 0) {  // kRim: every channel at once, in the first block
          rim_pixel<kNearest, PAD, DIMS>(x, im, row, k, ystride);
        }
      };
      int j = 0;
      for (; j + 8 <= row.len; j += 8) {
#if SK_CPU_AVX2
        const int32_t lo = row.lo[j / 8], hi = row.hi[j / 8];
        if (lo >= 0) {
          if (row.ahead != 0)
            for (int c = 0; c < NC; ++c) prefetch_at(xc[c], (int64_t)lo + row.ahead);
          const __m256i s = _mm256_load_si256((const __m256i*)(row.sel + j));
          for (int c = 0; c < NC; ++c) copy_window(yc[c] + j, xc[c], lo, hi, s);
          continue;
        }
#endif
        if (off[j] >= 0 && off[j + 7] >= 0) prefetch_group<NC>(xc[0], plane, off, j, j + 7, row.ahead);
        for (int k = j; k < j + 8; ++k) pixel(k);
      }
      for (; j < row.len; ++j) pixel(j);
    }
  }
};

// ---------------------------------------------------------------- bicubic (2-D)
template <int PAD, typename T>
struct BicubicRow : Segment<T> {
  alignas(32) float wx[4][kChunk], wy[4][kChunk];
  alignas(32) int32_t off[kChunk];  // top-left tap of the 4x4 window; kRim: a tap lies outside
#if SK_CPU_AVX512
  alignas(64) int32_t place[kChunk];  // float: groups of sixteen by runs (plan16): places
  Plan16 plan[kChunk / 16];           // and runs; start[0] < 0: eight at a time
  RimPlan16 rim16[kChunk / 16];       // zero padding: edge groups (rim_plan16; place too)
#endif

  void pass1(const Image& im) {
    tables(im);
#if SK_CPU_AVX512
    if constexpr (std::is_same<T, float>::value) {
      const int32_t last = (int32_t)std::min<int64_t>(im.H * im.W - 3 * im.W - 16, INT32_MAX);  // rows 1-3 too
      const int len = this->len;
      // aligned runs (plan16) with many channels only: with 3 the planning cost more than the
      // loads saved (1.05-1.07x the time)
      const int32_t phase = im.C >= kGroupsChannelsMin ? im.phase : -1;
      for (int g = 0; g < len / 16; ++g)
        if (!plan16(off + 16 * g, 3, last, plan[g], place + 16 * g, phase)) plan[g].start[0] = -1;
      if constexpr (PAD == kZeros) {  // the groups edge() is given: not sixteen, or not all interior
        for (int g = 0, j = 0; j < len; ++g, j += 16) {
          const int n = std::min(16, len - j);
          const __mmask16 live = (__mmask16)((1u << n) - 1);
          if (n == 16 && _mm512_movepi32_mask(_mm512_loadu_si512(off + j)) == 0) continue;
          if (im.align_corners) rim_plan16<1>(this->gx + j, this->gy + j, live, im.H, im.W, rim16[g], place + j);
          else rim_plan16<0>(this->gx + j, this->gy + j, live, im.H, im.W, rim16[g], place + j);
        }
      }
    }
#endif
  }

  void tables(const Image& im) {
    const int32_t H = (int32_t)im.H, W = (int32_t)im.W;
    const float xmax = (float)(W - 2), ymax = (float)(H - 2);
    const float* __restrict gx = this->gx;
    const float* __restrict gy = this->gy;
    float(*__restrict wx_)[kChunk] = wx;
    float(*__restrict wy_)[kChunk] = wy;
    int32_t* __restrict off_ = off;
    const int len = this->len;
    with_align_corners(im.align_corners, [&](auto AC) {
      for (int j = 0; j < len; ++j) {
        // Inside the image padding leaves every tap where it is, so only the rim needs it.
        const float cx = unnormalize(gx[j], im.W, AC), cy = unnormalize(gy[j], im.H, AC);
        const float fx = floorf(cx), fy = floorf(cy);
        float a[4], b[4];
        cubic_weights(cx - fx, a);
        cubic_weights(cy - fy, b);
        for (int k = 0; k < 4; ++k) {
          wx_[k][j] = a[k];
          wy_[k][j] = b[k];
        }
        // The 4x4 window fits <=> 1 <= floor(c) <= size - 3 <=> 1 <= c < size - 2.
        const bool inside = (cx >= 1.0f) & (cx < xmax) & (cy >= 1.0f) & (cy < ymax);
        const float sx = safe_coord(fx), sy = safe_coord(fy);
        off_[j] = inside ? clamp_tap((int32_t)sy - 1, H) * W + clamp_tap((int32_t)sx - 1, W) : kRim;
      }
    });
  }

  void pass2(const T* x, const Image& im, int64_t ystride, int64_t c_begin, int64_t c_end) const {
    const int64_t W = im.W;
    auto one = [&](const T* p, int j) {
      float acc = 0.0f;
      for (int r = 0; r < 4; ++r, p += W) {
        float row = 0.0f;
        for (int k = 0; k < 4; ++k) row = fmaf(wx[k][j], to_float(p[k]), row);
        acc = fmaf(wy[r][j], row, acc);
      }
      return acc;
    };
#if SK_CPU_AVX2
    const float* const wxs[4] = {wx[0], wx[1], wx[2], wx[3]};
    const float* const wys[4] = {wy[0], wy[1], wy[2], wy[3]};
    auto group = [&](auto nc, const T* const* xc, T* const* yc, int j) {
#if SK_CPU_AVX512
      if constexpr (std::is_same<T, float>::value) {
        if (j % 16 == 0 && j + 16 <= this->len && plan[j / 16].start[0] >= 0) {
          prefetch_group<decltype(nc)::value>(xc[0], im.H * W, off, j + 8, j + 15, this->ahead);  // the second eight
          bicubic_hex<decltype(nc)::value>(xc, yc, W, plan[j / 16], place + j, wxs, wys, j);
          return 16;
        }
      }
#endif
      bicubic_oct<decltype(nc)::value>(xc, yc, W, off, wxs, wys, j);
      return 8;
    };
#else
    const NoGroup group;
#endif
    auto rim = [&](int j) { rim_pixel<kBicubic, PAD, 2>(x, im, *this, j, ystride); };
#if SK_CPU_AVX512
    // Groups with rim pixels: sixteen (to the next multiple of 16, so interior runs stay aligned)
    // by gathers, cpu_bicubic.h rim_taps16; pixels beyond kNearCoord to rim().
    auto edge = [&](auto nc, const T* const* xc, T* const* yc, int j, bool with_rim) {
      if constexpr (std::is_same<T, float>::value) {
        const int n = std::min(16 - j % 16, this->len - j);
        if constexpr (PAD == kZeros) {  // prepared by pass 1 for the whole group of sixteen
          const int j16 = j - j % 16;
          const RimPlan16& e = rim16[j16 / 16];
          if (e.kind != kRimGather) {
            const __mmask16 live = (__mmask16)(((1u << n) - 1) << (j % 16)), store = live & e.near;
            if (e.kind == kRimZero) {
              for (int c = 0; c < decltype(nc)::value; ++c) _mm512_mask_storeu_ps(yc[c] + j16, store, _mm512_setzero_ps());
            } else {
              const __mmask16 whole = (__mmask16)((1u << std::min(16, this->len - j16)) - 1);
              __m512 wxv[4], wyv[4];
              for (int k = 0; k < 4; ++k) {
                wxv[k] = _mm512_maskz_loadu_ps(whole, wx[k] + j16);
                wyv[k] = _mm512_maskz_loadu_ps(whole, wy[k] + j16);
              }
              const __m512i idx = _mm512_loadu_si512(place + j16);
              for (int c = 0; c < decltype(nc)::value; ++c)
                _mm512_mask_storeu_ps(yc[c] + j16, store, bicubic_rim_runs(xc[c], W, e, idx, wxv, wyv));
            }
            if (with_rim)
              for (uint32_t m = (uint32_t)(live & ~e.near); m != 0; m &= m - 1) rim(j16 + __builtin_ctz(m));
            return n;
          }
        }
        const __mmask16 live = (__mmask16)((1u << n) - 1);
        const RimTaps16 t = im.align_corners ? rim_taps16<PAD, 1>(this->gx + j, this->gy + j, live, im.H, W)
                                             : rim_taps16<PAD, 0>(this->gx + j, this->gy + j, live, im.H, W);
        __m512 wxv[4], wyv[4];
        for (int k = 0; k < 4; ++k) {
          wxv[k] = _mm512_maskz_loadu_ps(live, wx[k] + j);
          wyv[k] = _mm512_maskz_loadu_ps(live, wy[k] + j);
        }
        for (int c = 0; c < decltype(nc)::value; ++c)
          _mm512_mask_storeu_ps(yc[c] + j, t.near, bicubic_rim16(xc[c], t, wxv, wyv));
        if (with_rim)
          for (uint32_t m = (uint32_t)(live & ~t.near); m != 0; m &= m - 1) rim(j + __builtin_ctz(m));
        return n;
      }
      return 0;
    };
#else
    const NoGroup edge;
#endif
    apply_channels(x, c_begin, c_end, im.H * W, off, this->len, this->y, ystride, this->ahead, one, group, edge,
                   rim);
  }
};

// ---------------------------------------------------------------- trilinear (3-D)
template <int PAD, typename T>
struct TrilinearRow : Segment<T> {
  alignas(32) float w[8][kChunk];
  alignas(32) int32_t off[kChunk];  // first tap's offset; kRim: a tap lies outside

  void pass1(const Image& im) {
    with_align_corners(im.align_corners,
                       [&](auto AC) { tables<AC>(im, this->gx, this->gy, this->gz, w, off, this->len); });
  }

  template <int AC>
  static void tables(const Image& im, const float* __restrict gx, const float* __restrict gy,
                     const float* __restrict gz, float (*__restrict w)[kChunk], int32_t* __restrict off, int len) {
    const int32_t D = (int32_t)im.D, H = (int32_t)im.H, W = (int32_t)im.W;
    const float xin = (float)(W - 2), yin = (float)(H - 2), zin = (float)(D - 2);
    for (int j = 0; j < len; ++j) {
      float cx = unnormalize(gx[j], im.W, AC), cy = unnormalize(gy[j], im.H, AC), cz = unnormalize(gz[j], im.D, AC);
      const bool near = PAD != kReflection || is_near(cx, cy, cz);
      cx = pad_near<PAD>(cx, im.W, AC), cy = pad_near<PAD>(cy, im.H, AC), cz = pad_near<PAD>(cz, im.D, AC);
      const float fx = floorf(cx), fy = floorf(cy), fz = floorf(cz);
      const float wx[2] = {(fx + 1.0f) - cx, cx - fx}, wy[2] = {(fy + 1.0f) - cy, cy - fy};
      const float wz[2] = {(fz + 1.0f) - cz, cz - fz};
      for (int k = 0; k < 8; ++k) w[k][j] = (wx[k & 1] * wy[(k >> 1) & 1]) * wz[k >> 2];
      // All 8 taps inside: 0 <= x0 <= W-2 and the like; only then converted to int.
      const bool inside = (fx >= 0.0f) & (fx <= xin) & (fy >= 0.0f) & (fy <= yin) & (fz >= 0.0f) & (fz <= zin) & near;
      off[j] = inside ? (clamp_tap((int32_t)fz, D) * H + clamp_tap((int32_t)fy, H)) * W + clamp_tap((int32_t)fx, W)
                      : kRim;
    }
  }

  void pass2(const T* x, const Image& im, int64_t ystride, int64_t c_begin, int64_t c_end) const {
    const int64_t HW = im.H * im.W, W = im.W;
    const int64_t tap[8] = {0, 1, W, W + 1, HW, HW + 1, HW + W, HW + W + 1};
    apply_channels(
        x, c_begin, c_end, im.D * HW, off, this->len, this->y, ystride, this->ahead,
        [&](const T* p, int j) {
          float acc = 0.0f;
          for (int k = 0; k < 8; ++k) acc = fmaf(w[k][j], to_float(p[tap[k]]), acc);
          return acc;
        },
        NoGroup{}, NoGroup{}, [&](int j) { rim_pixel<kBilinear, PAD, 3>(x, im, *this, j, ystride); });
  }
};

// The row type of a mode in 2-D or 3-D.
template <int MODE, int PAD, typename T, int DIMS>
using RowOf = typename std::conditional<
    MODE == kNearest, NearestRow<PAD, T, DIMS>,
    typename std::conditional<DIMS == 3, TrilinearRow<PAD, T>,
                              typename std::conditional<MODE == kBicubic, BicubicRow<PAD, T>,
                                                        BilinearRow<PAD, T>>::type>::type>::type;

}  // namespace cpu
SK_ISA_END
}  // namespace sk
