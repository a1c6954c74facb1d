"""The C++ build's fast paths against its shared per-location code (csrc/locations.h, what a
CUDA thread runs): the same bits, whatever the thread count or channel count."""

import numpy as np
import pytest

import surgeon_ops.kernels as K
from surgeon_ops.kernels import native

from .cases import MODES_2D, MODES_3D, PADDINGS, cpu_shared, theta_for


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
        grid = rng.uniform(-1.3, 1.3, (2,) + outs + (nsp,)).astype(np.float32)
        fast, shared = both_paths(lambda: K.grid_sample(x, grid, mode, padding, ac))
        np.testing.assert_array_equal(fast, shared)


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


def test_float16_paths_agree():
    rng = np.random.default_rng(2)
    x = rng.random((2, 3, 33, 35)).astype(np.float16)
    theta = theta_for(rng, 2, 2, "near").astype(np.float16)
    for mode in MODES_2D:
        fast, shared = both_paths(lambda: K.fused_grid_sample(x, theta, (31, 40), mode, "reflection", 0))
        np.testing.assert_array_equal(fast, shared)
