"""Affine warps spelled as exporters write them, or as they do not (built op by op with
``GraphBuilder``): the native AffineGrid -> GridSample pair, run-time base grids, homogeneous
matrices read coefficient by coefficient, dynamo's decomposition, ATen fallbacks and
com.microsoft::GridSample."""

from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

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


def inverse3(g, m, det_by_matmul: bool = False):
    """Adjugate over determinant of [N, 3, 3], element by element (Gather, Mul, Sub), as
    kornia's 3x3 inverse exports (``det_by_matmul``: the determinant as a MatMul of the first
    row and its cofactors instead)."""
    e = [[g.op("Gather", g.op("Gather", m, g.ints(i), axis=1), g.ints(j), axis=1) for j in range(3)] for i in range(3)]

    def minor(r0, r1, c0, c1):
        return g.op("Sub", g.op("Mul", e[r0][c0], e[r1][c1]), g.op("Mul", e[r0][c1], e[r1][c0]))

    cof = [[minor(1, 2, 1, 2), g.op("Neg", minor(1, 2, 0, 2)), minor(1, 2, 0, 1)],
           [g.op("Neg", minor(0, 2, 1, 2)), minor(0, 2, 0, 2), g.op("Neg", minor(0, 2, 0, 1))],
           [minor(0, 1, 1, 2), g.op("Neg", minor(0, 1, 0, 2)), minor(0, 1, 0, 1)]]
    if det_by_matmul:
        row = g.op("Concat", *[g.op("Unsqueeze", e[0][j], g.ints([1, 2])) for j in range(3)], axis=2)  # [N,1,3]
        col = g.op("Concat", *[g.op("Unsqueeze", cof[0][j], g.ints([1, 2])) for j in range(3)], axis=1)  # [N,3,1]
        det = g.op("Squeeze", g.op("MatMul", row, col), g.ints([1, 2]))
    else:
        det = g.op("Add", g.op("Add", g.op("Mul", e[0][0], cof[0][0]), g.op("Mul", e[0][1], cof[0][1])),
                   g.op("Mul", e[0][2], cof[0][2]))
    rows = [g.op("Concat", *[g.op("Unsqueeze", cof[j][i], g.ints([1, 2])) for j in range(3)], axis=2)
            for i in range(3)]  # the adjugate: cofactors transposed
    return g.op("Div", g.op("Concat", *rows, axis=1), g.op("Unsqueeze", det, g.ints([1, 2])))


def guarded_divide(g, xy, z):
    """xy / z as TorchScript writes kornia's homogeneous divide: a Where on |z| > eps, a Reciprocal."""
    mask = g.op("Greater", g.op("Abs", z), g.const(np.float32(1e-8)))
    zeros = g.op("ConstantOfShape", g.op("Shape", z))
    return g.op("Mul", g.op("Where", mask, g.op("Reciprocal", g.op("Where", mask, z, zeros)), zeros), xy)


def homogeneous_perspective(last_row="fixed", divide="plain", hw=(16, 12), opset: int = 18):
    """kornia's ``warp_perspective`` of ``[M; 0 0 1]`` (M a run-time [N, 2, 3]): the homogeneous
    matrix inverted by adjugate over determinant, every pixel's homogeneous point times it, x and
    y divided by the third coordinate: ``divide="plain"`` as dynamo writes it, ``"guarded"`` as
    TorchScript does (a Where on |z| > eps, a Reciprocal). The inverse's last row is exactly
    (0, 0, 1), so the grid is affine_grid of its first two rows.

    ``last_row``: "fixed" (the constant row); "data" (a third run-time row: a free homography);
    "scaled" ((0, 0, s), s a run-time value per item: the divide is by s); "picked" (a row of a
    constant table picked at W - 12: (0, 0, 1) up to W = 12 and (0.5, 0, 1) past it)."""
    g = GraphBuilder()
    h, w = hw
    x = g.input("x", ["N", 3, h, "W" if last_row == "picked" else w])
    m = g.input("M", ["N", 2, 3])
    batch = g.op("Shape", m, start=0, end=1)
    if last_row == "data":
        row = g.input("R", ["N", 1, 3])
    elif last_row == "scaled":
        s = g.input("S", ["N", 1, 1])
        row = g.op("Concat", g.op("Expand", g.const(np.zeros((1, 1, 2), np.float32)),
                                  g.op("Concat", batch, g.ints([1, 2]), axis=0)), s, axis=2)
    elif last_row == "picked":
        table = g.const(np.array([[0.0, 0.0, 1.0], [0.5, 0.0, 1.0]], np.float32), "rows")
        at = g.op("Min", g.op("Max", g.op("Sub", g.op("Shape", x, start=3, end=4), g.ints([12])), g.ints([0])),
                  g.ints([1]))
        picked = g.op("Gather", table, at, axis=0)  # [1, 3]
        row = g.op("Expand", g.op("Unsqueeze", picked, g.ints([0])), g.op("Concat", batch, g.ints([1, 3]), axis=0))
    else:
        row = g.op("Expand", g.const(np.array([[[0.0, 0.0, 1.0]]], np.float32)),
                   g.op("Concat", batch, g.ints([1, 3]), axis=0))
    t = inverse3(g, g.op("Concat", m, row, axis=1))
    ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing="ij")  # align_corners=1
    if last_row == "picked":  # the points follow W: a Range per axis
        wn = g.op("Squeeze", g.op("Shape", x, start=3, end=4), g.ints([0]))
        steps = g.op("Cast", g.op("Range", g.const(np.array(0, np.int64)), wn, g.const(np.array(1, np.int64))), to=FLOAT)
        span = g.op("Cast", g.op("Sub", wn, g.const(np.array(1, np.int64))), to=FLOAT)
        px = g.op("Sub", g.op("Div", g.op("Mul", steps, g.const(np.float32(2))), span), g.const(np.float32(1)))
        px = g.op("Expand", g.op("Unsqueeze", px, g.ints([0])), g.op("Concat", g.ints([h]), g.op("Shape", px), axis=0))
        py = g.op("Expand", g.const(ys[:, :1].astype(np.float32), "ys"), g.op("Shape", px))
        ones = g.op("Expand", g.const(np.ones((1, 1), np.float32)), g.op("Shape", px))
        points = g.op("Concat", *[g.op("Unsqueeze", p, g.ints([2])) for p in (px, py, ones)], axis=2)
        points = g.op("Unsqueeze", g.op("Reshape", points, g.ints([-1, 3])), g.ints([0]))
    else:
        points = g.const(np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3).astype(np.float32), "points")
    moved = g.op("MatMul", points, g.op("Transpose", t, perm=[0, 2, 1]))  # [N, HW, 3]
    xy = g.op("Slice", moved, g.ints([0]), g.ints([2]), g.ints([2]))
    z = g.op("Slice", moved, g.ints([2]), g.ints([3]), g.ints([2]))
    if divide == "guarded":
        xy = guarded_divide(g, xy, z)
    else:
        xy = g.op("Div", xy, z)
    shape = g.op("Concat", batch, g.ints([h]), g.op("Shape", x, start=3, end=4), g.ints([2]), axis=0)
    grid = g.op("Reshape", xy, shape)
    g.op("GridSample", x, grid, out="y", align_corners=1, mode="bilinear", padding_mode="zeros")
    g.output("y")
    return g.model(opset)


def padded_row_perspective(tile: int = 16, opset: int = 17, last_row: str = "fixed"):
    """kornia 0.9.2's ``warp_perspective`` of ``[M; 0 0 1]`` as TorchScript writes it with a
    ``dsize`` read off the image: the image padded by F.pad for a one-pixel axis (pads computed
    from the sizes, through F.pad's concatenate / reshape / reverse / transpose; zero on the batch),
    the base grid built with a size-1 guard on each axis (``Where(n > 1, linspace, 0)``), the
    inverse repeated per output row by a Tile whose count the trace baked (``tile``: the model runs
    only at H = tile), a guarded divide by the third coordinate, and the padded image sampled.
    ``last_row="data"``: a third run-time row R (a free homography, projective)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    m = g.input("M", ["N", 2, 3])
    i64 = lambda v: g.const(np.array(v, np.int64))  # noqa: E731
    h, w = (g.op("Gather", g.op("Shape", x), i64(a), axis=0) for a in (2, 3))
    one = lambda n: g.op("Cast", g.op("Equal", n, i64(1)), to=7)  # noqa: E731  (a pixel more where n == 1)
    torch_pads = g.op("Concat", i64([0]), g.op("Unsqueeze", one(w), g.ints([0])), i64([0]),
                      g.op("Unsqueeze", one(h), g.ints([0])), axis=0)
    rest = g.op("ConstantOfShape", i64([4]), value=helper.make_tensor("v", 7, [1], [0]))
    pairs = g.op("Reshape", g.op("Concat", torch_pads, rest, axis=0), g.ints([-1, 2]))
    reversed_ = g.op("Slice", pairs, g.ints([-1]), g.ints([-(2 ** 62)]), g.ints([0]), g.ints([-1]))
    pads = g.op("Reshape", g.op("Transpose", reversed_, perm=[1, 0]), g.ints([-1]))
    padded = g.op("Pad", x, pads, mode="constant")
    batch = g.op("Shape", m, start=0, end=1)
    row = g.input("R", ["N", 1, 3]) if last_row == "data" else g.op(
        "Expand", g.const(np.array([[[0.0, 0.0, 1.0]]], np.float32)), g.op("Concat", batch, g.ints([1, 3]), axis=0))
    t = inverse3(g, g.op("Concat", m, row, axis=1))

    def coords(n):  # align_corners=1 coordinates along an axis of n, 0 where n == 1
        steps = g.op("Cast", g.op("Range", i64(0), n, i64(1)), to=FLOAT)
        span = g.op("Cast", g.op("Sub", n, i64(1)), to=FLOAT)
        line = g.op("Sub", g.op("Mul", g.op("Div", steps, span), g.const(np.float32(2))), g.const(np.float32(1)))
        return g.op("Where", g.op("Greater", g.op("Cast", n, to=FLOAT), g.const(np.float32(1))), line,
                    g.op("Mul", steps, g.const(np.float32(0))))

    hw = g.op("Concat", g.op("Unsqueeze", h, g.ints([0])), g.op("Unsqueeze", w, g.ints([0])), axis=0)
    px = g.op("Expand", g.op("Unsqueeze", coords(w), g.ints([0])), hw)
    py = g.op("Expand", g.op("Unsqueeze", coords(h), g.ints([1])), hw)
    ones = g.op("Expand", g.const(np.ones((1, 1), np.float32)), hw)
    points = g.op("Concat", *[g.op("Unsqueeze", p, g.ints([2])) for p in (px, py, ones)], axis=2)
    image_batch = g.op("Shape", padded, start=0, end=1)
    points = g.op("Expand", g.op("Unsqueeze", points, g.ints([0])),
                  g.op("Concat", image_batch, hw, g.ints([3]), axis=0))
    points = g.op("Reshape", points,
                  g.op("Concat", g.ints([-1]), g.op("Unsqueeze", w, g.ints([0])), g.ints([3]), axis=0))
    tiled = g.op("Tile", g.op("Unsqueeze", t, g.ints([1])), g.ints([1, tile, 1, 1]))
    per_row = g.op("Reshape", tiled, g.ints([-1, 3, 3]))
    moved = g.op("MatMul", points, g.op("Transpose", per_row, perm=[0, 2, 1]))  # [N * H, W, 3]
    xy = g.op("Slice", moved, g.ints([0]), g.ints([2]), g.ints([2]))
    z = g.op("Slice", moved, g.ints([2]), g.ints([3]), g.ints([2]))
    xy = guarded_divide(g, xy, z)
    grid = g.op("Reshape", xy, g.op("Concat", image_batch, hw, g.ints([2]), axis=0))
    g.op("GridSample", padded, grid, out="y", align_corners=1, mode="bilinear", padding_mode="zeros")
    g.output("y")
    return g.model(opset)


def baked_base_grid(size_from: str = "hw"):
    """dynamo's decomposition with Dim.AUTO and align_corners=True: a constant [16 * 12, 3, 1]
    base grid times theta, reshaped to dims read off the image: ``size_from="hw"``
    [N, H, W, 2] (any H * W = 192 runs), ``"h"`` [N, H, 12, 2] (H = 16 only)."""
    g = GraphBuilder()
    x = g.input("x", ["s77", 3, "s53", "s0"] if size_from == "hw" else ["N", 3, "H", "W"])
    theta = g.input("theta", ["s80" if size_from == "hw" else "N", 2, 3])
    ys, xs = np.meshgrid(np.linspace(-1, 1, 16), np.linspace(-1, 1, 12), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(192, 3, 1).astype(np.float32)
    t = g.op("Unsqueeze", g.op("Transpose", theta, perm=[0, 2, 1]), g.ints([1]))
    flat = g.op("ReduceSum", g.op("Mul", g.const(base), t), g.ints([-2]), keepdims=0)
    dims = [g.op("Shape", x, start=a, end=a + 1) for a in ((0, 2, 3) if size_from == "hw" else (0, 2))]
    tail = g.ints([2]) if size_from == "hw" else g.ints([12, 2])
    grid = g.op("Reshape", flat, g.op("Concat", *dims, tail, axis=0))
    g.op("GridSample", x, grid, out="y", align_corners=1)
    g.output("y")
    return g.model(18)
