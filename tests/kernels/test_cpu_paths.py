"""The C++ build's fast paths against its shared per-location code (csrc/locations.h, what a
CUDA thread runs): the same bits, whatever the thread count or channel count."""

import numpy as np
import pytest

import surgeon_ops.kernels as K
from surgeon_ops.kernels import native

from .cases import COMBOS, MODES_2D, MODES_3D, PADDINGS, cpu_shared, theta_for


def both_paths(fn):
    return fn(), cpu_shared(fn)


@pytest.mark.parametrize("nsp,mode", [(2, m) for m in MODES_2D] + [(3, m) for m in MODES_3D])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_fast_paths_equal_the_shared_code(nsp, mode, padding, ac):
    rng = np.random.default_rng(nsp + ac)
    # Blocks of 4 channels: one partial, full, full + partial; from 16 channels bilinear goes
    # tile by tile (cpu_fast.cpp, kTileChannelsMin).
    for c in (1, 3, 8, 11, 19):
        ins, outs = ((40, 37), (45, 300)) if nsp == 2 else ((9, 12, 11), (7, 10, 13))
        x = rng.normal(0, 1, (2, c) + ins).astype(np.float32)
        theta = theta_for(rng, 2, nsp, "near")
        fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, outs, mode, padding, ac, num_threads=2))
        np.testing.assert_array_equal(fast, shared)
        grid = odd_grid(rng, (2,) + outs + (nsp,))
        fast, shared = both_paths(lambda: K.grid_sample(x, grid, mode, padding, ac))
        np.testing.assert_array_equal(fast, shared)


def odd_grid(rng, shape, dtype=np.float32):
    """Coordinates in and around the image, a few far away (where reflection folds by fmodf,
    past 2^21 pixels, or sizes clamp), exact tap positions, and non-finite ones."""
    grid = rng.uniform(-1.3, 1.3, shape).astype(dtype)
    flat = grid.reshape(-1)
    flat[::5] = np.round(flat[::5] * 8) / 8
    odd = [np.nan, np.inf, -np.inf, 3e4, -6e4] + ([1e9, -4e7, 1e30] if dtype == np.float32 else [])
    flat[3::29] = np.resize(np.array(odd, dtype), flat[3::29].size)
    return grid


def test_thread_counts_give_the_same_bits():
    rng = np.random.default_rng(0)
    x = rng.random((3, 5, 70, 90)).astype(np.float32)
    theta = theta_for(rng, 3, 2, "near")
    ref = K.fused_grid_sample(x, theta, (130, 150), num_threads=1)
    for threads in (2, 3, 7):
        np.testing.assert_array_equal(K.fused_grid_sample(x, theta, (130, 150), num_threads=threads), ref)


def test_thread_count_from_the_environment(monkeypatch):
    lib = native.library("cpu")
    monkeypatch.setenv("SURGEON_NUM_THREADS", "3")
    assert lib.surgeon_cpu_default_threads() == 3
    monkeypatch.delenv("SURGEON_NUM_THREADS")
    assert lib.surgeon_cpu_default_threads() >= 1


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_float16_fast_paths_equal_the_shared_code(nsp, mode, padding, ac):
    rng = np.random.default_rng(2 + ac)
    for c in (3, 19):
        ins, outs = ((33, 35), (31, 140)) if nsp == 2 else ((7, 9, 8), (5, 8, 11))
        x = rng.normal(0, 1, (2, c) + ins).astype(np.float16)
        theta = theta_for(rng, 2, nsp, "near").astype(np.float16)
        fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, outs, mode, padding, ac))
        np.testing.assert_array_equal(fast, shared)
        grid = odd_grid(rng, (2,) + outs + (nsp,), np.float16)
        fast, shared = both_paths(lambda: K.grid_sample(x, grid, mode, padding, ac))
        np.testing.assert_array_equal(fast, shared)


def _poisoned_edges(x):
    """``x`` with NaN, infinities and -0.0 on its first and last rows and -inf down its last
    column: what a tap outside the image must never read."""
    edge = x[..., [0, -1], :]
    edge.reshape(-1)[::3] = np.array([np.nan, np.inf, -0.0, -np.inf], np.float32)[np.arange(edge.size)[::3] % 4]
    x[..., [0, -1], :] = edge
    x[..., :, -1] = -np.inf
    return x


def _warp(nsp, scale, turn, shift):
    """theta [1, nsp, nsp+1]: a scale, a turn (radians) in the x-y plane and a shift."""
    t = np.eye(nsp, nsp + 1) * scale
    c, s = np.cos(turn), np.sin(turn)
    t[:2, :2] = scale * np.array([[c, -s], [s, c]])
    t[:, nsp] = shift
    return t[None].astype(np.float32)


@pytest.mark.parametrize("dtype", (np.float32, np.float16))
@pytest.mark.parametrize("nsp,mode", ((2, "nearest"), (3, "nearest"), (2, "bilinear")))
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_nearest_windows_and_unfolded_reflection(dtype, nsp, mode, padding, ac):
    """Nearest copies a group of eight pixels by two vector windows where the warp allows it
    (cpu_simd.h window8), and reflection skips the fold for coordinates inside the image
    (NearestRow::unfolded, BilinearRow::tables).  The identity reads up to each plane's last
    element; a mild turn puts a few pixels outside, a zoom out many (either way the groups of
    sixteen that hold them are folded again whole: cpu_rows.h fold_the_rest), a zoom in repeats elements within a window; 1, 6 and 19 channels take the row
    and tile routes (blocks of 4 channels and every remainder; 36 rows make a full tile of 32
    and a short one); rows of 43 end in three pixels after the last group of eight."""
    ins = (36, 43) if nsp == 2 else (2, 36, 43)
    warps = [(1.0, 0.0, 0.0), (1.05, 0.17, 0.03), (2.5, 0.3, 0.2), (0.45, -0.05, -0.3), (1.0, 1.5708, 0.0)]
    rng = np.random.default_rng(11)
    for c in (1, 6, 19):
        x = rng.normal(0, 1, (1, c) + ins).astype(dtype)
        for scale, turn, shift in warps:
            theta = _warp(nsp, scale, turn, shift).astype(dtype)
            fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, ins, mode, padding, ac))
            np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))
    if mode == "nearest" and padding == "zeros" and ac == 0:  # the identity copies every element, bit for bit
        x = rng.normal(0, 1, (1, 3) + ins).astype(dtype)
        x.reshape(-1)[::7] = np.array([np.nan, -0.0, np.inf], dtype)[np.arange(x.size)[::7] % 3]
        same = K.fused_grid_sample(x, _warp(nsp, 1.0, 0.0, 0.0).astype(dtype), ins, "nearest", padding, ac)
        np.testing.assert_array_equal(same.view(np.uint8), x.view(np.uint8))


@pytest.mark.parametrize("dtype", (np.float32, np.float16))
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_bicubic_runs_of_sixteen(dtype, padding, ac):
    """Bicubic at x86-64-v4 picks sixteen pixels' taps out of a few runs of the plane that pass 1
    plans (cpu_avx512.h plan16): each half in two runs, or up to four for a row change next to a
    half's end, or eight at a time where four do not do.  Turns of 0.1-1 radian put two to five
    input rows under a group; a zoom out spreads a group too far for any plan; images 15, 16 and
    19 wide leave no room for a run, one, or a few (runs are clamped to the plane's end); 1, 6
    and 19 channels take the row and tile routes.  The bits must be the per-location code's."""
    warps = [(1.0, 0.0, 0.0), (1.05, 0.1, 0.03), (0.9, 0.35, -0.1), (1.1, 1.0, 0.05), (2.5, 0.3, 0.2),
             (0.45, -0.05, -0.3)]
    rng = np.random.default_rng(17)
    for ins in ((40, 83), (23, 15), (21, 16), (30, 19)):
        for c in (1, 6, 19):
            x = rng.normal(0, 1, (1, c) + ins).astype(dtype)
            for scale, turn, shift in warps:
                theta = _warp(2, scale, turn, shift).astype(dtype)
                fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, (ins[0], ins[1] + 40), "bicubic",
                                                                      padding, ac))
                np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))


# (scale, turn, shift): zoom outs and shifts that put most groups on the image's rim
_EDGE_WARPS = ((2.5, 0.3, 0.2), (1.6, -0.4, -0.7), (1.0, 0.05, 1.5), (1.0, 0.2, 0.05))


def _runs_equal_shared(x, wo, mode, padding, ac, rng, warps):
    """The fast path's bits are the per-location code's, for the warps and an odd grid."""
    for scale, turn, shift in warps:
        theta = _warp(2, scale, turn, shift)
        fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, (x.shape[2] + 3, wo), mode, padding, ac))
        np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))
    grid = odd_grid(rng, (1, 7, wo, 2))
    fast, shared = both_paths(lambda: K.grid_sample(x, grid, mode, padding, ac))
    np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_bicubic_rim_by_gathers(padding, ac):
    """Bicubic at x86-64-v4 samples groups with rim pixels by masked gathers of per-lane padded
    taps (cpu_bicubic.h rim_taps16): a tap outside must read 0.0f as the per-location code's
    select does, so NaN, infinities and -0.0 on the image's edges must not leak into a pixel
    that does not read them, nor a non-finite or far coordinate (kept per pixel) be lost.  Zoom
    outs and shifts put most pixels on the rim; rows of 13, 24 and 45 end in partial groups."""
    rng = np.random.default_rng(23)
    for ins, wo in (((19, 16), 13), ((25, 40), 24), ((9, 9), 45)):
        for c in (1, 5, 19):
            x = _poisoned_edges(rng.normal(0, 1, (1, c) + ins).astype(np.float32))
            _runs_equal_shared(x, wo, "bicubic", padding, ac, rng, _EDGE_WARPS[:3])


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_bilinear_edge_groups_by_runs(padding, ac):
    """Float bilinear with 16 or more channels at x86-64-v4 samples an edge group (rim pixels,
    pixels without taps, a row's end) from up to four runs of the plane about its lanes' first
    taps, loaded with the elements outside the plane masked off (cpu_avx512.h edge_runs16), or
    by masked gathers where four runs do not cover it: a tap outside the image (a column -1 or
    W, which lies in the row before or after, or a row outside the plane) must read +0.0f as
    the per-location code's does, so the poisoned edges must not leak.  Zoom outs and shifts
    put most groups on the rim; rows of 13, 24 and 45 end in partial groups."""
    rng = np.random.default_rng(29)
    for ins, wo in (((19, 16), 13), ((25, 40), 24), ((9, 9), 45), ((64, 64), 64)):
        x = _poisoned_edges(rng.normal(0, 1, (1, 17) + ins).astype(np.float32))
        _runs_equal_shared(x, wo, "bilinear", padding, ac, rng, _EDGE_WARPS)


@pytest.mark.parametrize("mode", ("bilinear", "bicubic"))
@pytest.mark.parametrize("ac", (0, 1))
def test_runs_moved_onto_cache_lines(mode, ac):
    """With 16 or more float channels plan16 moves runs to starts on 64-byte lines where their
    pixels still fit (cpu_avx512.h align_runs), from where the input sits in its line (cpu_fast.cpp:
    the phase, for planes of a multiple of 16 elements). Inputs 0, 1, 4 and 15 elements past a
    line, planes of 64x64, 40x48 and 25x40 (no phase), warps that keep groups in two to five
    input rows: the same elements, so the per-location code's bits."""
    rng = np.random.default_rng(37)
    for ins, outs in (((64, 64), (64, 64)), ((40, 48), (37, 70)), ((25, 40), (30, 45))):
        size = 16 * ins[0] * ins[1]
        buf = np.empty(size + 64, np.float32)
        line = (-(buf.ctypes.data // 4)) % 16  # the first element on a 64-byte line
        for shift in (0, 1, 4, 15):
            x = buf[line + shift:line + shift + size].reshape((1, 16) + ins)
            x[...] = _poisoned_edges(rng.normal(0, 1, x.shape).astype(np.float32))
            for scale, turn, offset in ((0.9, 0.2, 0.05), (1.05, 0.1, 0.03), (1.1, 1.0, 0.05), (0.8, -0.3, 0.0)):
                theta = _warp(2, scale, turn, offset)
                for padding in ("zeros", "border"):
                    fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, outs, mode, padding, ac))
                    np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))


@pytest.mark.parametrize("ac", (0, 1))
def test_bicubic_zero_rim_by_runs(ac):
    """Under zero padding a bicubic edge group's taps come from runs of the plane that may start
    before it or end past it (cpu_bicubic.h rim_plan16): loads masked to the plane, taps outside
    zeroed by the permutes, groups with no tap inside stored as 0 directly, groups no four runs
    cover by gathers. NaN, infinities and -0.0 on the edges must not leak; tiny values make sums
    of -0.0 and +0.0; the plane's first and last elements are read by runs that start before or
    end after it (2x1, 1x33 and 3x5 images); far and non-finite coordinates stay per pixel;
    partial groups, 1 to 19 channels (blocks of 4 and the tile route) and 1 and 2 threads."""
    rng = np.random.default_rng(31)
    for ins, (ho, wo) in (((64, 64), (64, 64)), ((9, 9), (12, 45)), ((2, 1), (5, 20)), ((1, 33), (4, 40)),
                          ((3, 5), (6, 50)), ((25, 40), (28, 29))):
        for c in (1, 6, 19):
            x = _poisoned_edges(rng.normal(0, 1, (1, c) + ins).astype(np.float32))
            x[..., :, 0] = np.nan
            if c == 6:
                x[..., 1:-1, 1:-1] *= np.float32(1e-30)
            for scale, turn, shift in ((0.9, 0.2, 0.05), (1.6, -0.4, -0.7), (1.0, 0.05, 1.5), (1.05, 0.0, 0.0),
                                       (0.5, 1.2, -0.1), (30.0, 0.1, 0.0)):
                theta = _warp(2, scale, turn, shift)
                for threads in (1, 2):
                    fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, (ho, wo), "bicubic", "zeros", ac,
                                                                          num_threads=threads))
                    np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))
            grid = odd_grid(rng, (1, 7, wo, 2))
            fast, shared = both_paths(lambda: K.grid_sample(x, grid, "bicubic", "zeros", ac))
            np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("ac", (0, 1))
def test_many_channel_bilinear_runs_and_edge_groups(padding, ac):
    """Float bilinear with 16 or more channels (x86-64-v4) plans a row's groups of sixteen once
    for all channels: all-interior ones by runs of the plane, the others as edge groups whose
    rim lanes are set up by the per-location code's own bilinear_taps and read by masked
    gathers. A tap outside must read 0.0f as the per-location code does, so NaN, infinities and
    -0.0 on the edges must not leak into a pixel that does not read them; far and non-finite
    coordinates stay per pixel. Zoom outs, turns and shifts put groups on the rim; rows of 13,
    24 and 45 end in partial groups; 16, 19 and 35 channels cover whole and partial blocks, and
    64 rows and more take the larger tiles."""
    rng = np.random.default_rng(29)
    for ins, (ho, wo) in (((19, 16), (22, 13)), ((25, 40), (70, 24)), ((9, 9), (12, 45))):
        for c in (16, 19, 35):
            x = _poisoned_edges(rng.normal(0, 1, (1, c) + ins).astype(np.float32))
            for scale, turn, shift in ((2.5, 0.3, 0.2), (1.6, -0.4, -0.7), (1.0, 0.05, 1.5), (0.9, 0.0, 0.0)):
                theta = _warp(2, scale, turn, shift)
                for threads in (1, 2):
                    fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, (ho, wo), "bilinear", padding, ac,
                                                                          num_threads=threads))
                    np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))
            grid = odd_grid(rng, (1, 7, wo, 2))
            fast, shared = both_paths(lambda: K.grid_sample(x, grid, "bilinear", padding, ac))
            np.testing.assert_array_equal(fast.view(np.uint8), shared.view(np.uint8))
