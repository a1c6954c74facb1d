"""The readable definition of AffineGrid / FusedGridSample / GridSample: torch's
F.affine_grid and F.grid_sample in vectorised numpy.

Works in float64 when given float64 (the tests' high-precision reference), else in float32
(float16 data is computed in float32 and rounded at the end, as the fast kernels do).  In
float32 it follows torch's CPU evaluation order for the coordinates, so that floor() and
nearest rounding decide as torch does.

Non-finite coordinates (decided): a NaN or infinite normalised grid coordinate, from an
explicit grid or from theta (NaN or infinite entries, or an overflow), is read as -1 before
it is unnormalised, in every mode and padding; the other coordinates of the point keep their
values.  That is what onnxruntime's GridSample does, so a fused model equals its unfused
onnxruntime original there (torch's CPU kernels give NaN, 0 or an edge value depending on
mode and padding, and its CUDA kernels differ from them).  Finite coordinates, and NaN or
infinite values in x, are sampled as torch does.

Shapes: x [N, C, (D,) H, W]; theta [N, 2, 3] / [N, 3, 4]; grid [N, (D,) H, W, 2|3] with
coordinates in x, y(, z) order; sizes are spatial, (D,) H, W.  A theta or grid batch of 1
is used for every batch item of x.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import _args

CUBIC_A = -0.75  # torch's cubic convolution constant


def _work_dtype(dtype) -> type:
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def base_coords(n: int, align_corners: bool, dtype=np.float32) -> np.ndarray:
    """torch's base grid along a dim of n samples: linspace(-1, 1, n), times (n-1)/n
    without align_corners; a single sample sits at 0."""
    if n <= 1:
        return np.zeros(n, dtype)
    i = np.arange(n)
    step = dtype(2) / dtype(n - 1)
    # torch computes -1 + step*i for the first half and 1 - step*(n-1-i) for the rest, each a
    # fused multiply-add; for float32 one float64 evaluation rounds the same way.
    wide = np.float64(step)
    r = np.where(i < n // 2, -1.0 + wide * i, 1.0 - wide * (n - 1 - i)).astype(dtype)
    if not align_corners:
        r = (r * dtype(n - 1)) / dtype(n)  # two rounded steps, as torch
    return r


def affine_grid(theta, size, align_corners=False) -> np.ndarray:
    """grid[n, (d,) i, j] = theta[n] @ (x_j, y_i, (z_d,) 1), summed in torch's order."""
    theta = np.asarray(theta)
    wd = _work_dtype(theta.dtype)
    t = theta.astype(wd)
    nsp = _args.theta_dims(t.shape)
    size = tuple(int(s) for s in size)
    if len(size) != nsp:
        raise ValueError(f"size must have {nsp} spatial values, got {list(size)}")
    lead = (t.shape[0],) + (1,) * nsp
    # base[m]: coordinate m (x, y, z) of every base point, broadcastable to [N, *size]
    base = []
    for m in range(nsp):
        axis = nsp - 1 - m  # x runs along the last spatial axis
        shape = [1] * (1 + nsp)
        shape[1 + axis] = size[axis]
        base.append(base_coords(size[axis], align_corners, wd).reshape(shape))
    grid = np.empty((t.shape[0],) + size + (nsp,), wd)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite theta is valid input
        for k in range(nsp):
            acc = base[0] * t[:, k, 0].reshape(lead)
            for m in range(1, nsp):
                acc = acc + base[m] * t[:, k, m].reshape(lead)
            grid[..., k] = acc + t[:, k, nsp].reshape(lead)
    return grid.astype(theta.dtype)


# ---------------------------------------------------------------- coordinates
def unnormalize(g, size: int, align_corners: bool):
    """[-1, 1] -> pixel index space (corner centres with align_corners, else corner edges).
    A non-finite coordinate is read as -1 first (see the module docstring)."""
    one, two = g.dtype.type(1), g.dtype.type(2)
    g = np.where(np.isfinite(g), g, -one)
    if align_corners:
        return ((g + one) / two) * g.dtype.type(size - 1)
    return ((g + one) * g.dtype.type(size) - one) / two


def clip(c, size: int):
    hi = c.dtype.type(size - 1)
    c = np.where(c > 0, c, c.dtype.type(0))  # NaN -> 0
    return np.where(c < hi, c, hi)


def reflect(c, twice_low: int, twice_high: int):
    """Reflect c into [twice_low / 2, twice_high / 2] (bounds given doubled)."""
    if twice_low == twice_high:
        return np.zeros_like(c)
    lo = c.dtype.type(twice_low / 2)
    span = c.dtype.type((twice_high - twice_low) / 2)
    c = np.abs(c - lo)
    extra = np.fmod(c, span)
    flips = np.floor(c / span)
    return np.where(np.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def pad(c, size: int, padding: int, align_corners: bool):
    """torch's compute_coordinates, then clamped to +-2^30 (NaN to -2^30): outside any image."""
    if padding == _args.PADDINGS["border"]:
        c = clip(c, size)
    elif padding == _args.PADDINGS["reflection"]:
        c = reflect(c, 0, 2 * (size - 1)) if align_corners else reflect(c, -1, 2 * size - 1)
        c = clip(c, size)
    big = c.dtype.type(2.0**30)  # as grid_sample_math.h: NaN -> -big; beyond it, no tap is inside
    return np.minimum(np.where(c > -big, c, -big), big)


# ---------------------------------------------------------------- sampling
def _gather(x, index, valid):
    """x[n, :, index] per output point, 0 where not valid.  index: per spatial axis of x
    (slowest first), int arrays of the output's shape [N, *out]."""
    n, c = x.shape[:2]
    flat_index = np.zeros(index[0].shape, np.int64)
    for idx, size in zip(index, x.shape[2:]):
        flat_index = flat_index * size + np.clip(idx, 0, size - 1)
    flat = x.reshape(n, c, -1)
    values = np.take_along_axis(flat, flat_index.reshape(n, 1, -1), axis=2)
    values = np.where(valid.reshape(n, 1, -1), values, x.dtype.type(0))
    return values.reshape((n, c) + index[0].shape[1:])


def _in_range(i, size):
    return (i >= 0) & (i < size)


def _nearest(x, coords, padding, align_corners):
    sizes = x.shape[2:]  # slowest first: (D,) H, W
    index, valid = [], True
    for c, size in zip(coords, sizes):
        i = np.rint(pad(c, size, padding, align_corners)).astype(np.int64)  # half to even
        index.append(i)
        valid = valid & _in_range(i, size)
    return _gather(x, index, valid)


def _linear(x, coords, padding, align_corners):
    sizes = x.shape[2:]
    lower, weights = [], []
    for c, size in zip(coords, sizes):
        c = pad(c, size, padding, align_corners)
        f = np.floor(c)
        lower.append(f.astype(np.int64))
        weights.append(((f + 1) - c, c - f))
    out = 0
    for corner in itertools.product((0, 1), repeat=len(sizes)):  # last axis (x) fastest
        index = [lo + d for lo, d in zip(lower, corner)]
        valid = np.logical_and.reduce([_in_range(i, s) for i, s in zip(index, sizes)])
        # weight as torch: (wx * wy) * wz
        w = weights[-1][corner[-1]]
        for axis in range(len(sizes) - 2, -1, -1):
            w = w * weights[axis][corner[axis]]
        out = out + w[:, None] * _gather(x, index, valid)
    return out


def cubic_weights(t):
    """The 4 cubic convolution weights (Keys, A = -0.75) for fractional offset t."""
    a = t.dtype.type(CUBIC_A)
    one = t.dtype.type(1)

    def near(s):
        return ((a + 2) * s - (a + 3)) * s * s + one

    def far(s):
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    return far(t + one), near(t), near(one - t), far((one - t) + one)


def _bicubic(x, coords, padding, align_corners):
    (cy, cx), (h, w) = coords, x.shape[2:]
    fx, fy = np.floor(cx), np.floor(cy)
    wx, wy = cubic_weights(cx - fx), cubic_weights(cy - fy)

    def taps(f, size):  # each tap padded on its own (torch's get_value_bounded)
        return [np.trunc(pad(f + (k - 1), size, padding, align_corners)).astype(np.int64) for k in range(4)]

    xs, ys = taps(fx, w), taps(fy, h)
    out = 0
    for r in range(4):
        row = 0
        for k in range(4):
            valid = _in_range(ys[r], h) & _in_range(xs[k], w)
            row = row + wx[k][:, None] * _gather(x, [ys[r], xs[k]], valid)
        out = out + wy[r][:, None] * row
    return out


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False) -> np.ndarray:
    """torch.nn.functional.grid_sample(x, grid, mode, padding_mode, align_corners)."""
    x, grid = np.asarray(x), np.asarray(grid)
    nsp = _args.check_sampling_shapes(x.shape, grid.shape, from_theta=False)
    mode, padding = _args.mode_code(mode), _args.padding_code(padding_mode)
    _args.check_mode_for_dims(mode, nsp)
    ac = bool(_args.flag(align_corners))
    wd = _work_dtype(x.dtype)
    xs = x.astype(wd)
    g = np.broadcast_to(grid.astype(wd), (x.shape[0],) + grid.shape[1:])
    sizes = x.shape[2:]
    # grid holds x, y(, z); pair each with its image axis, slowest axis first
    norm = [g[..., nsp - 1 - axis] for axis in range(nsp)]
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite coordinates are valid input
        coords = [unnormalize(c, s, ac) for c, s in zip(norm, sizes)]
        if mode == _args.MODES["bicubic"]:
            out = _bicubic(xs, coords, padding, ac)
        else:
            out = (_nearest if mode == _args.MODES["nearest"] else _linear)(xs, coords, padding, ac)
    return np.asarray(out, wd).astype(x.dtype)


def fused_grid_sample(x, theta, output_size, mode="bilinear", padding_mode="zeros", align_corners=False):
    """grid_sample(x, affine_grid(theta, output_size)) without rounding the grid to x's dtype
    when x is float16 (the grid stays float32, as in the fused kernels)."""
    x = np.asarray(x)
    theta = np.asarray(theta, dtype=x.dtype)
    nsp = _args.check_sampling_shapes(x.shape, theta.shape, from_theta=True)
    size = _args.output_size(output_size, nsp, x.shape[0], x.shape[1])
    wd = _work_dtype(x.dtype)
    grid = affine_grid(theta.astype(wd), size, align_corners)
    return grid_sample(x.astype(wd), grid, mode, padding_mode, align_corners).astype(x.dtype)
