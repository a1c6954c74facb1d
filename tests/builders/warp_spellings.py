"""Affine warps spelled as exporters write them, or as they do not (built op by op with
``GraphBuilder``): the native AffineGrid -> GridSample pair, run-time base grids, homogeneous
matrices read coefficient by coefficient, dynamo's decomposition, ATen fallbacks and
com.microsoft::GridSample."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from .graph import FLOAT, GraphBuilder


def native_pair(dims: int = 2, opset: int = 20, size: str = "static", ac: int = 0, mode: str = "linear",
                padding: str = "zeros", out=None, spatial_in=None, theta_batch="N", symbolic_spatial=False):
    """AffineGrid -> GridSample. ``size``: "static" (spatial from a constant, batch from theta)
    or "shape" (Shape(x), as torch writes ``affine_grid(theta, x.size())``)."""
    g = GraphBuilder()
    spatial_in = spatial_in or ([6, 5, 4] if dims == 3 else [16, 12])
    names = ["D", "H", "W"][-dims:]
    x = g.input("x", ["N", 3, *(names if symbolic_spatial else spatial_in)])
    theta = g.input("theta", [theta_batch, dims, dims + 1])
    if size == "shape":
        size_value = g.op("Shape", x)
    else:
        batch = g.op("Shape", theta, start=0, end=1)
        size_value = g.op("Concat", batch, g.ints([3, *(out or spatial_in)]), axis=0)
    grid = g.op("AffineGrid", theta, size_value, align_corners=ac)
    g.op("GridSample", x, grid, out="y", align_corners=ac, mode=mode, padding_mode=padding)
    g.output("y")
    return g.model(opset)


def matmul_range_grid(opset: int = 17):
    """Unseen spelling: the base grid is built at run time (Range over Shape(x), a meshgrid by
    Expand, ones by ConstantOfShape), flattened to [H*W, 3] and multiplied by theta^T."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    n1 = g.op("Gather", shape, g.ints([0]), axis=0)
    h1 = g.op("Gather", shape, g.ints([2]), axis=0)
    w1 = g.op("Gather", shape, g.ints([3]), axis=0)

    def coords(n1_):  # torch's align_corners=False centres: (2i + 1) / n - 1
        n = g.op("Squeeze", n1_, g.ints([0]))
        steps = g.op("Cast", g.op("Range", g.const(np.array(0, np.int64)), n, g.const(np.array(1, np.int64))), to=FLOAT)
        scaled = g.op("Div", g.op("Add", g.op("Mul", steps, g.const(np.float32(2))), g.const(np.float32(1))),
                      g.op("Cast", n, to=FLOAT))
        return g.op("Sub", scaled, g.const(np.float32(1)))

    hw = g.op("Concat", h1, w1, axis=0)
    xs = g.op("Expand", g.op("Unsqueeze", coords(w1), g.ints([0])), hw)
    ys = g.op("Expand", g.op("Unsqueeze", coords(h1), g.ints([1])), hw)
    ones = g.op("ConstantOfShape", hw, value=numpy_helper.from_array(np.array([1], np.float32)))
    base = g.op("Concat", *(g.op("Unsqueeze", v, g.ints([2])) for v in (xs, ys, ones)), axis=2)
    flat = g.op("Reshape", base, g.ints([-1, 3]))
    points = g.op("MatMul", flat, g.op("Transpose", theta, perm=[0, 2, 1]))  # [N, H*W, 2]
    grid = g.op("Reshape", points, g.op("Concat", n1, h1, w1, g.ints([2]), axis=0))
    g.op("GridSample", x, grid, out="y", align_corners=0, mode="bilinear", padding_mode="zeros")
    g.output("y")
    return g.model(opset)


def elementwise_homogeneous(projective: bool = False, out=(10, 8), opset: int = 18):
    """Unseen spelling: a homogeneous [N,3,3] read coefficient by coefficient (Reshape to
    [N, 9] and one Slice each), constant coordinate planes, Mul/Add per term, Concat.
    ``projective`` divides by the third row: no longer affine."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    m = g.input("M", ["N", 3, 3])
    flat = g.op("Reshape", m, g.ints([-1, 9]))
    coef = [g.op("Unsqueeze", g.op("Slice", flat, g.ints([k]), g.ints([k + 1]), g.ints([1])), g.ints([2]))
            for k in range(9 if projective else 6)]
    h, w = out
    ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing="ij")  # align_corners=1
    px = g.const(xs[None].astype(np.float32), "plane_x")
    py = g.const(ys[None].astype(np.float32), "plane_y")

    def row(a, b, c):
        return g.op("Add", g.op("Add", g.op("Mul", a, px), g.op("Mul", b, py)), c)

    gx, gy = row(*coef[0:3]), row(*coef[3:6])
    if projective:
        wz = row(*coef[6:9])
        gx, gy = g.op("Div", gx, wz), g.op("Div", gy, wz)
    grid = g.op("Concat", g.op("Unsqueeze", gx, g.ints([3])), g.op("Unsqueeze", gy, g.ints([3])), axis=3)
    g.op("GridSample", x, grid, out="y", align_corners=1, mode="bilinear", padding_mode="border")
    g.output("y")
    return g.model(opset)


def dynamo_chains(count: int, hw=(8, 6)):
    """``count`` copies of dynamo's decomposition, each with its own constants and names."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, *hw])
    h, w = hw
    ys, xs = np.meshgrid((np.arange(h) * 2 + 1) / h - 1, (np.arange(w) * 2 + 1) / w - 1, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(h * w, 3, 1).astype(np.float32)
    for i in range(count):
        theta = g.input(f"theta{i}", ["N", 2, 3])
        t = g.op("Unsqueeze", g.op("Transpose", theta, perm=[0, 2, 1]), g.ints([1]))
        s = g.op("ReduceSum", g.op("Mul", g.const(base, "base"), t), g.ints([-2]), keepdims=0)
        grid = g.op("Reshape", s, g.ints([-1, h, w, 2]))
        g.op("GridSample", x, grid, out=f"y{i}", align_corners=0, mode="bilinear", padding_mode="zeros")
        g.output(f"y{i}")
    return g.model(18)


def aten_pair(mode: int = 1, padding: int = 2, ac: int = 0):
    """ATen fallback nodes built by hand: affine_grid_generator + grid_sampler (enums)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["N", 2, 3])
    size = g.op("Shape", x)
    flag = g.const(np.array(ac, np.int64), "flag")
    grid = g.op("ATen", theta, size, flag, domain="org.pytorch.aten", operator="affine_grid_generator")
    g.op("ATen", x, grid, g.const(np.array(mode, np.int64)), g.const(np.array(padding, np.int64)), flag,
         domain="org.pytorch.aten", out="y", operator="grid_sampler")
    g.output("y")
    return g.model(15, [("org.pytorch.aten", 1)])


def ms_matmul_pair(mode: str = "nearest", opset: int = 15):
    """A constant base grid @ theta^T feeding com.microsoft::GridSample."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["N", 2, 3])
    h, w = 10, 8
    ys, xs = np.meshgrid((np.arange(h) * 2 + 1) / h - 1, (np.arange(w) * 2 + 1) / w - 1, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(h * w, 3).astype(np.float32)
    points = g.op("MatMul", g.const(base, "base"), g.op("Transpose", theta, perm=[0, 2, 1]))
    grid = g.op("Reshape", points, g.ints([-1, h, w, 2]))
    g.op("GridSample", x, grid, domain="com.microsoft", out="y", align_corners=0, mode=mode, padding_mode="zeros")
    g.output("y")
    return g.model(opset, [("com.microsoft", 1)])
