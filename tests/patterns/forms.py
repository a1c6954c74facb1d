"""Hand-built forms of issue 20 that no exporter writes this way: sizes as data, constant grids
tiled to a dynamic batch, several theta-shaped values, casts and axis swaps around the grid, a
dynamic theta batch that broadcasts."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..builders import GraphBuilder


def pixel_grid(h: int, w: int, theta) -> np.ndarray:
    """affine_grid(theta) for align_corners=0 as a constant [n, h, w, 2] (theta [n, 2, 3])."""
    ys, xs = np.meshgrid((np.arange(h) * 2 + 1) / h - 1, (np.arange(w) * 2 + 1) / w - 1, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1)
    return np.einsum("hwj,nij->nhwi", base, np.asarray(theta, np.float64)).astype(np.float32)


def size_from_data():
    """AffineGrid(theta, Concat(Shape(x)[:2], hw)) with ``hw`` an int64 [2] model input."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["N", 2, 3])
    hw = g.input("hw", [2], TensorProto.INT64)
    size = g.op("Concat", g.op("Shape", x, start=0, end=2), hw, axis=0)
    g.op("GridSample", x, g.op("AffineGrid", theta, size), out="y")
    g.output("y")
    return g.model(20)


def tiled_constant_grid(grid: np.ndarray, dims=("N", 3, 16, 12)):
    """A constant grid [1, h, w, 2] Tile'd to the image's batch before the sampler."""
    g = GraphBuilder()
    x = g.input("x", list(dims))
    repeats = g.op("Concat", g.op("Shape", x, start=0, end=1), g.ints([1, 1, 1]), axis=0)
    g.op("GridSample", x, g.op("Tile", g.const(grid, "fixed_grid"), repeats), out="y")
    g.output("y")
    return g.model(17)


def constant_grid(grid: np.ndarray, batch: int):
    g = GraphBuilder()
    x = g.input("x", [batch, 3, 16, 12])
    g.op("GridSample", x, g.const(grid, "fixed_grid"), out="y")
    g.output("y")
    return g.model(17)


def theta_and_its_transpose():
    """Row 0 of the grid from M, row 1 from Transpose(M): two theta-shaped values, one computed
    from the other; walked through, the cut is M."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    m = g.input("M", ["N", 3, 3])
    mt = g.op("Transpose", m, perm=[0, 2, 1])
    ys, xs = np.meshgrid((np.arange(10) * 2 + 1) / 10 - 1, (np.arange(8) * 2 + 1) / 8 - 1, indexing="ij")
    px, py = g.const(xs[None].astype(np.float32)), g.const(ys[None].astype(np.float32))

    def coef(source, r, c):
        return g.op("Reshape", g.op("Gather", g.op("Gather", source, g.ints(r), axis=1), g.ints(c), axis=1),
                    g.ints([-1, 1, 1]))

    u = g.op("Add", g.op("Add", g.op("Mul", coef(m, 0, 0), px), g.op("Mul", coef(m, 0, 1), py)), coef(m, 0, 2))
    v = g.op("Add", g.op("Add", g.op("Mul", coef(mt, 0, 1), px), g.op("Mul", coef(mt, 1, 1), py)), coef(mt, 2, 1))
    grid = g.op("Concat", g.op("Unsqueeze", u, g.ints([3])), g.op("Unsqueeze", v, g.ints([3])), axis=3)
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    return g.model(17)


def cast_and_swapped_grid():
    """theta cast to float16 and back, a (y, x) grid computed, then a Gather swapping the last
    axis to (x, y) and a float16 round trip between grid and sampler."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.op("Cast", g.op("Cast", g.input("theta", ["N", 2, 3]), to=TensorProto.FLOAT16), to=TensorProto.FLOAT)
    swapped = g.op("Gather", theta, g.ints([1, 0]), axis=1)  # rows (y, x)
    grid_yx = g.op("AffineGrid", swapped, g.op("Shape", x))
    grid = g.op("Gather", grid_yx, g.ints([1, 0]), axis=3)
    grid = g.op("Cast", g.op("Cast", grid, to=TensorProto.FLOAT16), to=TensorProto.FLOAT)
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    return g.model(20)


def expanded_theta_batch():
    """theta [M, 2, 3] with its own batch symbol, its grid Expand'ed to x's batch: one theta
    for every image (M = 1), or one per image (M = N)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["M", 2, 3])
    size = g.op("Concat", g.op("Shape", theta, start=0, end=1), g.ints([3, 16, 12]), axis=0)
    grid = g.op("AffineGrid", theta, size)
    shape = g.op("Concat", g.op("Shape", x, start=0, end=1), g.ints([16, 12, 2]), axis=0)
    g.op("GridSample", x, g.op("Expand", grid, shape), out="y")
    g.output("y")
    return g.model(20)
