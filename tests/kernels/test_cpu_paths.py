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
