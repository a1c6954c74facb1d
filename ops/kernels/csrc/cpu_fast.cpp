// The CPU fast paths (float32 and float16), compiled once per instruction-set level
// (cpu_level.h), in their own translation unit so that the build compiles the levels in
// parallel.
//
// The grid is never materialised: each output tile gets base-grid coordinate tables and
// per-row products of theta, each row segment its normalised coordinates (three float ops
// per pixel, torch's order), then a cpu_rows.h sampler's two passes.  Threads take tiles.
#include <cmath>
#include <memory>
#include <vector>

#include "cpu_common.h"
#include "cpu_level.h"
#include "cpu_rows.h"
#include "grid_sample_math.h"

namespace sk {
SK_ISA_BEGIN
namespace cpu {
namespace {

// Output tiles: rows [i0, i1) x columns [j0, j1) of output plane p (one (n, d) pair).  The
// fast samplers walk a tile row by row; a tile's input footprint stays in L1/L2 even when
// theta rotates, where whole output rows would sweep the image through the cache.
// 16 x 256 measured best on Zen 3 for 3 and 64 channels alike once rows were prefetched
// (1.0-1.35x over 16 x 128, whose segments left the prefetches less lead; a 90-degree
// rotation, which walks input columns, 0.93x).  kChunk caps the width.
constexpr int64_t kTileRows = 16, kTileCols = 256;
// Nearest's rows are light (an offset and a window place per pixel), and its pass 2 runs a
// block of channels over all of a tile's rows in one loop: 32 rows took 0.94-0.96x the time
// of 16 with 64-256 channels (two threads 0.96-1.02x), the same with 3.  Its 32 rows' tables
// take up to 171 KB of stack (3-D), less than bicubic's or trilinear's 16 (179-195 KB).
template <typename Row>
constexpr int64_t kRowsPerTile = kTileRows;
template <int PAD, typename T, int DIMS>
constexpr int64_t kRowsPerTile<NearestRow<PAD, T, DIMS>> = 2 * kTileRows;
// Bilinear and 2-D nearest with many channels take up to 64 rows a tile where that leaves at
// least as many tiles as threads (rows_per_tile): a 64x64 plane is then read once, not in
// bands with their overlaps.  Bilinear: 1x256x64x64 0.83-0.87x the time of 16 rows at one
// thread, 0.90-0.92x at 32, 1x64x128x128 0.94-0.97x; nearest (against 32 rows): 0.87-0.88x
// and 0.95x (AVX-512 Xeon).
template <typename Row>
constexpr int64_t kMaxRowsPerTile = kRowsPerTile<Row>;
template <int PAD, typename T>
constexpr int64_t kMaxRowsPerTile<BilinearRow<PAD, T>> = 4 * kTileRows;
template <int PAD, typename T, int DIMS>
constexpr int64_t kMaxRowsPerTile<NearestRow<PAD, T, DIMS>> = 4 * kTileRows;

// Prefetch distance.  Output row i + kAheadRows samples near where row i does, moved by
// theta's column for the output row (or as the grid moves); while a sampler works on row
// i it prefetches those lines, which the hardware prefetchers miss: they follow runs along
// a row, not a band that walks diagonally down the image (8x3x256x256 on Zen 3: 1.5-2x).
constexpr int kAheadRows = 4;

// The element offset in the input of a move of (gx, gy, gz) in normalised coordinates; 0
// when there is none, or it is NaN or leaves the image (prefetching would only cost).
inline int64_t tap_shift(float gx, float gy, float gz, int64_t W, int64_t H, int64_t D, int ac) {
  auto pixels = [&](float g, int64_t size) { return g * 0.5f * (float)(ac ? size - 1 : size); };
  const float dx = pixels(gx, W), dy = pixels(gy, H), dz = pixels(gz, D);
  if (!(fabsf(dx) < (float)W && fabsf(dy) < (float)H && fabsf(dz) < (float)D)) return 0;
  return ((int64_t)lrintf(dz) * H + (int64_t)lrintf(dy)) * W + (int64_t)lrintf(dx);
}

// The prefetch distance of an explicit grid: its own move over kAheadRows rows at a
// segment's first pixel, g (K coordinates a point, Wo points a row; row i of Ho).
template <int K, typename T>
int64_t grid_ahead(const T* g, int64_t i, int64_t Ho, int64_t Wo, int64_t W, int64_t H, int64_t D, int ac) {
  if (i + kAheadRows >= Ho) return 0;
  const T* h = g + kAheadRows * Wo * K;
  float move[3] = {0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; ++k) move[k] = to_float(h[k]) - to_float(g[k]);
  return tap_shift(move[0], move[1], move[2], W, H, D, ac);
}

// The move of the base grid's y over kAheadRows output rows (it is linear in the row).
inline float rows_ahead_step(const std::vector<float>& by) {
  return by.size() > 1 ? (by[1] - by[0]) * (float)kAheadRows : 0.0f;
}

template <typename Fn>  // fn(p, i0, i1, j0, j1) over tiles of th rows
void parallel_tiles(const Workers& workers, int64_t planes, int64_t Ho, int64_t Wo, int64_t th, const Fn& fn) {
  const int64_t tw = std::min<int64_t>(kTileCols, kChunk);
  const int64_t nti = (Ho + th - 1) / th, ntj = (Wo + tw - 1) / tw;
  run_tasks(workers, planes * nti * ntj, [&](int64_t t) {
    const int64_t p = t / (nti * ntj), ti = (t / ntj) % nti, tj = t % ntj;
    fn(p, ti * th, std::min(Ho, (ti + 1) * th), tj * tw, std::min(Wo, (tj + 1) * tw));
  });
}

// From this many channels on, a tile runs pass 1 for all its rows, then each block of
// channels over all the rows: every mode computes a location's taps and weights once for all
// channels (bilinear, Zen 3: 1.05-1.14x with 32-256 channels, no gain with 16 and 0.97x with
// 8; nearest 1.8-2.4x, bicubic 1.3-1.5x).  Row by row, a pixel's planes (all in one L2 set
// when power-of-two sizes put them 64 KiB apart) evicted each other's band of taps before the
// next row came back to it.  Blocks of 4 channels measured best: 1 or 2 at a time ran 1.2-2.2x
// slower (too few streams in flight to hide the misses), 8 or 16 1.1-1.4x slower.
constexpr int64_t kTileChannelsMin = 16;
constexpr int64_t kTileChannelBlock = 4;

// Rows per tile: kRowsPerTile, or with many channels up to kMaxRowsPerTile, doubled while the
// tiles of `planes` planes still number at least the threads.  Never changes a result.
template <typename Row>
int64_t rows_per_tile(int64_t planes, int64_t C, int64_t Ho, int64_t Wo, int threads) {
  int64_t th = kRowsPerTile<Row>;
  if (C < kTileChannelsMin) return th;
  const int64_t tw = std::min<int64_t>(kTileCols, kChunk), ntj = (Wo + tw - 1) / tw;
  while (2 * th <= kMaxRowsPerTile<Row> && planes * ((Ho + 2 * th - 1) / (2 * th)) * ntj >= threads) th *= 2;
  return th;
}

// Pass 2 of a tile's rows for channels [c0, c1): row by row, or in one call where the row
// type has one (nearest).
template <typename Row, typename T>
void pass2_rows(const Row* rows, int nrows, const T* x, const Image& im, int64_t ystride, int64_t c0, int64_t c1) {
  for (int r = 0; r < nrows; ++r) rows[r].pass2(x, im, ystride, c0, c1);
}
template <int PAD, typename T, int DIMS>
void pass2_rows(const NearestRow<PAD, T, DIMS>* rows, int nrows, const T* x, const Image& im, int64_t ystride,
                int64_t c0, int64_t c1) {
  NearestRow<PAD, T, DIMS>::copy_rows(rows, nrows, x, im, ystride, c0, c1);
}

// One output tile of rows [i0, i1), len columns.  coordinates(i, row, g) fills row i's
// coordinates g[0] (x), g[1] (y), g[2] (z), and its output pointer and prefetch distance.
template <typename Row, int DIMS, typename T, typename Coordinates>
__attribute__((noinline)) void run_tile(const T* x, const Image& im, int64_t ystride, int64_t i0, int64_t i1, int len,
                                        const Coordinates& coordinates) {
  auto prepare = [&](Row& row, float (*g)[kChunk], int64_t i) {
    row.gx = g[0], row.gy = g[1], row.gz = DIMS == 3 ? g[2] : nullptr, row.len = len;
    coordinates(i, row, g);
    row.pass1(im);
  };
  if (im.C < kTileChannelsMin) {
    alignas(32) float g[DIMS][kChunk];
    Row row;
    for (int64_t i = i0; i < i1; ++i) {
      prepare(row, g, i);
      row.pass2(x, im, ystride, 0, im.C);
    }
    return;
  }
  const int nrows = (int)(i1 - i0);
  auto run = [&](Row* rows, float (*g)[DIMS][kChunk]) {
    for (int r = 0; r < nrows; ++r) prepare(rows[r], g[r], i0 + r);
    for (int64_t c0 = 0; c0 < im.C; c0 += kTileChannelBlock)
      pass2_rows(rows, nrows, x, im, ystride, c0, std::min(im.C, c0 + kTileChannelBlock));
  };
  constexpr int64_t kMax = kMaxRowsPerTile<Row>;
  if constexpr (kMax > kRowsPerTile<Row>) {
    // 64 bilinear rows take 0.7 MB (nearest 0.3): kept per thread on the heap, not on the
    // stack of whatever pool thread runs the tile
    struct Tile {
      alignas(32) float g[kMax][DIMS][kChunk];
      Row rows[kMax];
    };
    static thread_local std::unique_ptr<Tile> tile;
    if (!tile) tile.reset(new Tile);
    run(tile->rows, tile->g);
  } else {
    alignas(32) float g[kRowsPerTile<Row>][DIMS][kChunk];
    Row rows[kRowsPerTile<Row>];
    run(rows, g);
  }
}

// Coordinates of a segment come from theta (kFromTheta) or from an explicit grid.  A run-time
// flag, tested once per row: as a template parameter it doubled the samplers' instantiations
// (and the build's time) for no measurable speed.
template <int MODE, int PAD, typename T>
void sample_2d_all(const T* x, const T* coords, T* y, int64_t N, int64_t C, const int64_t* in, const int64_t* out,
                   int64_t coord_batch, int ac, const Workers& workers, const bool kFromTheta) {
  using Row = RowOf<MODE, PAD, T, 2>;
  const int64_t H = in[0], W = in[1], Ho = out[0], Wo = out[1];
  const Image im{C, 1, H, W, ac};
  std::vector<float> bx, by, th;
  if (kFromTheta) {
    bx = base_table(Wo, ac);
    by = base_table(Ho, ac);
    th = to_floats(coords, coord_batch * 6);
  }
  const int64_t tile_rows = rows_per_tile<Row>(N, C, Ho, Wo, workers.threads);
  parallel_tiles(workers, N, Ho, Wo, tile_rows, [&](int64_t n, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const int64_t cn = coord_batch == 1 ? 0 : n;
    const int len = (int)(j1 - j0);
    const float* t = kFromTheta ? th.data() + cn * 6 : nullptr;
    const float step = rows_ahead_step(by);
    const int64_t theta_ahead = kFromTheta ? tap_shift(t[1] * step, t[4] * step, 0.0f, W, H, 1, ac) : 0;
    T* yt = y + n * C * Ho * Wo + j0;  // the tile's column in output row 0
    // Row i's normalised coordinates, output and prefetch distance.
    auto coordinates = [&](int64_t i, Row& row, float (*g)[kChunk]) {
      float* __restrict gx = g[0];
      float* __restrict gy = g[1];
      row.y = yt + i * Wo;
      if (kFromTheta) {
        const float ry0 = by[(size_t)i] * t[1], ry1 = by[(size_t)i] * t[4];
        for (int j = 0; j < len; ++j) {  // affine_row2, with the row's products hoisted
          const float b = bx[(size_t)(j0 + j)];
          gx[j] = (b * t[0] + ry0) + t[2];
          gy[j] = (b * t[3] + ry1) + t[5];
        }
        row.ahead = theta_ahead;
        return;
      }
      const T* p = coords + ((cn * Ho + i) * Wo + j0) * 2;
      for (int j = 0; j < len; ++j) {
        gx[j] = to_float(p[2 * j]);
        gy[j] = to_float(p[2 * j + 1]);
      }
      row.ahead = grid_ahead<2>(p, i, Ho, Wo, W, H, 1, ac);
    };
    // plan16 moves runs onto 64-byte lines where every channel's plane starts at the same place
    // in its line (float planes of a multiple of 16 elements)
    Image imt = im;
    const T* xn = x + n * C * H * W;
    if (sizeof(T) == 4 && (H * W) % 16 == 0 && (uintptr_t)xn % 4 == 0) imt.phase = (int32_t)(((uintptr_t)xn / 4) % 16);
    run_tile<Row, 2>(xn, imt, Ho * Wo, i0, i1, len, coordinates);
  });
}

template <int MODE, int PAD, typename T>
void sample_3d_all(const T* x, const T* coords, T* y, int64_t N, int64_t C, const int64_t* in, const int64_t* out,
                   int64_t coord_batch, int ac, const Workers& workers, const bool kFromTheta) {
  using Row = RowOf<MODE, PAD, T, 3>;
  const int64_t D = in[0], H = in[1], W = in[2], Do = out[0], Ho = out[1], Wo = out[2];
  const Image im{C, D, H, W, ac};
  std::vector<float> bx, by, bz, th;
  if (kFromTheta) {
    bx = base_table(Wo, ac);
    by = base_table(Ho, ac);
    bz = base_table(Do, ac);
    th = to_floats(coords, coord_batch * 12);
  }
  const int64_t out_plane = Do * Ho * Wo;
  constexpr int64_t tile_rows = kRowsPerTile<Row>;
  parallel_tiles(workers, N * Do, Ho, Wo, tile_rows, [&](int64_t nd, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const int64_t n = nd / Do, d = nd % Do, cn = coord_batch == 1 ? 0 : n;
    const int len = (int)(j1 - j0);
    const float* t = kFromTheta ? th.data() + cn * 12 : nullptr;
    const float step = rows_ahead_step(by);
    const int64_t theta_ahead = kFromTheta ? tap_shift(t[1] * step, t[5] * step, t[9] * step, W, H, D, ac) : 0;
    T* yt = y + n * C * out_plane + d * Ho * Wo + j0;  // the tile's column in output row (d, 0)
    auto coordinates = [&](int64_t i, Row& row, float (*g)[kChunk]) {
      float* __restrict gx = g[0];
      float* __restrict gy = g[1];
      float* __restrict gz = g[2];
      row.y = yt + i * Wo;
      if (kFromTheta) {
        const float yv = by[(size_t)i], zv = bz[(size_t)d];
        const float ry[3] = {yv * t[1], yv * t[5], yv * t[9]};
        const float rz[3] = {zv * t[2], zv * t[6], zv * t[10]};
        for (int j = 0; j < len; ++j) {  // affine_row3, with the row's products hoisted
          const float b = bx[(size_t)(j0 + j)];
          gx[j] = ((b * t[0] + ry[0]) + rz[0]) + t[3];
          gy[j] = ((b * t[4] + ry[1]) + rz[1]) + t[7];
          gz[j] = ((b * t[8] + ry[2]) + rz[2]) + t[11];
        }
        row.ahead = theta_ahead;
        return;
      }
      const T* p = coords + (((cn * Do + d) * Ho + i) * Wo + j0) * 3;
      for (int j = 0; j < len; ++j) {
        gx[j] = to_float(p[3 * j]);
        gy[j] = to_float(p[3 * j + 1]);
        gz[j] = to_float(p[3 * j + 2]);
      }
      row.ahead = grid_ahead<3>(p, i, Ho, Wo, W, H, D, ac);
    };
    run_tile<Row, 3>(x + n * C * D * H * W, im, out_plane, i0, i1, len, coordinates);
  });
}

void fast_sample(bool from_theta, int dtype, int spatial_dims, const void* x, const void* coords, void* y, int64_t N,
                 int64_t C, const int64_t* in, const int64_t* out, int64_t coord_batch, int mode, int pad, int ac,
                 Workers workers) {
  with_dtype(dtype, [&](auto type) {
    using T = decltype(type);
    const T *xt = (const T*)x, *ct = (const T*)coords;
    if (spatial_dims == 2) {
      with_mode_pad<true>(mode, pad, [&](auto m, auto p) {
        sample_2d_all<decltype(m)::value, decltype(p)::value>(xt, ct, (T*)y, N, C, in, out, coord_batch, ac, workers,
                                                              from_theta);
      });
    } else {
      with_mode_pad<false>(mode, pad, [&](auto m, auto p) {
        sample_3d_all<decltype(m)::value, decltype(p)::value>(xt, ct, (T*)y, N, C, in, out, coord_batch, ac, workers,
                                                              from_theta);
      });
    }
    return 0;
  });
}

}  // namespace
}  // namespace cpu
SK_ISA_END

namespace levels {
const FastPaths SK_LEVEL_TABLE(fast_paths) = {cpu::fast_sample};
}  // namespace levels
}  // namespace sk
