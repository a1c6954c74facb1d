"""Shared inputs for the kernel tests: small random cases that cover odd sizes, size-1 dims,
up- and down-sampling, thetas far outside the image, batch > 1 and theta broadcast."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

MODES_2D = ("bilinear", "nearest", "bicubic")
MODES_3D = ("bilinear", "nearest")
PADDINGS = ("zeros", "border", "reflection")
# Every (spatial dims, mode, padding, align_corners) the kernels support.
COMBOS = [(2, m, p, ac) for m in MODES_2D for p in PADDINGS for ac in (0, 1)] + \
         [(3, m, p, ac) for m in MODES_3D for p in PADDINGS for ac in (0, 1)]


@contextlib.contextmanager
def shared_path():
    """The C++ build with its fast paths off: every location through csrc/locations.h, the
    code one CUDA thread runs."""
    from surgeon_ops.kernels import native

    native.set_cpu_fast_paths(False)
    try:
        yield
    finally:
        native.set_cpu_fast_paths(True)


def cpu_shared(fn):
    """fn() on the C++ build's per-location path (shared_path)."""
    with shared_path():
        return fn()


def theta_for(rng, n, nsp, kind):
    """Affine matrices [n, nsp, nsp+1]: near identity, far outside, or a plain scale."""
    eye = np.eye(nsp, nsp + 1, dtype=np.float64)
    if kind == "near":
        t = eye + rng.normal(0, 0.25, (n, nsp, nsp + 1))
    elif kind == "far":  # maps most of the output well outside the image
        t = eye * rng.uniform(1.5, 3.0) + rng.normal(0, 0.5, (n, nsp, nsp + 1))
        t[..., nsp] += rng.choice([-1, 1], (n, nsp)) * rng.uniform(1.2, 2.5, (n, nsp))
    else:  # pure scale and shift: stresses exact tap positions
        t = np.repeat(eye[None], n, 0)
        t[..., nsp] = rng.uniform(-0.2, 0.2, (n, nsp))
    return t.astype(np.float32)


def cases(nsp, seed=0):
    """(x, theta, output size) triples, float32, sizes up to 32 a side."""
    rng = np.random.default_rng(seed)
    shapes = [  # (N, C, in spatial, out spatial, theta batch, theta kind)
        (2, 3, (7, 9), (5, 11), 2, "near"),        # odd sizes, down in H, up in W
        (3, 2, (12, 10), (25, 21), 1, "near"),     # upsampling, theta broadcast
        (1, 4, (32, 30), (9, 8), 1, "scale"),      # strong downsampling
        (2, 1, (1, 6), (4, 1), 2, "near"),         # size-1 dims in and out
        (2, 3, (6, 5), (7, 6), 2, "far"),          # thetas far outside
        (1, 2, (1, 1), (3, 2), 1, "near"),         # a single-pixel image
        (2, 11, (9, 8), (6, 13), 2, "near"),       # more channels than a SIMD block
    ]
    out = []
    for n, c, ins, outs, tb, kind in shapes:
        if nsp == 3:
            ins, outs = (max(1, ins[0] // 3),) + ins, (max(1, outs[0] // 2),) + outs
        x = rng.random((n, c) + ins).astype(np.float32)
        out.append((x, theta_for(rng, tb, nsp, kind), outs))
    return out


def torch_fused(x, theta, size, mode, padding, align_corners, dtype=None):
    """torch's affine_grid + grid_sample, as numpy; theta broadcast over x's batch."""
    import torch
    import torch.nn.functional as F

    xt, tt = torch.from_numpy(np.asarray(x)), torch.from_numpy(np.asarray(theta))
    if dtype is not None:
        xt, tt = xt.to(dtype), tt.to(dtype)
    tt = tt.expand(xt.shape[0], *tt.shape[1:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about size-1 grids with align_corners
        grid = F.affine_grid(tt, (xt.shape[0], xt.shape[1]) + tuple(size), align_corners=bool(align_corners))
        y = F.grid_sample(xt, grid, mode=mode, padding_mode=padding, align_corners=bool(align_corners))
    return y.numpy()


def assert_equals_torch(got, x, theta, size, mode, padding, align_corners, what=""):
    """``got`` against torch's pair on the same float32 inputs, within the bound of two
    computations of it (tests/error_bounds.py); a float16 ``got`` is rounded once more."""
    from ..error_bounds import assert_within, grid_sample_bound, unit_roundoff

    x32, t32 = np.asarray(x, np.float32), np.asarray(theta, np.float32)
    want = torch_fused(x32, t32, size, mode, padding, align_corners)
    bound = grid_sample_bound(x32, t32, size, mode, padding, align_corners)
    if np.asarray(got).dtype == np.float16:
        bound = bound + unit_roundoff(np.float16) * np.abs(want)
    assert_within(got, want, bound, what or f"{x32.shape} -> {tuple(size)}")
