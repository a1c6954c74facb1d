"""Issue 27's traps: regions that pass for affine on every probe and bend elsewhere, and their
controls. Each builder returns a model with inputs ``x`` (and ``theta`` or others) and output
``y``; ``trap=False`` gives the twin without the trap (which must fuse and be equal)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..builders import FLOAT, INT64, GraphBuilder


def _pair(g: GraphBuilder, theta: str, x: str, size: str | None = None, ac: int = 0) -> str:
    return g.op("AffineGrid", theta, size or g.op("Shape", x), align_corners=ac)


def _finish(g: GraphBuilder, x: str, grid: str, opset: int = 20, padding: str = "zeros", mode: str = "linear", ac: int = 0):
    g.op("GridSample", x, grid, out="y", align_corners=ac, padding_mode=padding, mode=mode)
    g.output("y")
    return g.model(opset)


def grid_op(op: str, trap: bool = True, padding: str = "zeros"):
    """An op on the grid that is the identity near the probes: Clip at +-20, a wrap with Mod past
    +-30, a quadratic term of 1e-9, rounding to steps of 2^-16. (A clamp at 20 changes the output
    only where padding reads past the image: reflection.)"""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    grid = _pair(g, g.input("theta", ["N", 2, 3]), x)
    if trap and op == "Clip":
        grid = g.op("Clip", grid, g.const(np.float32(-20)), g.const(np.float32(20)))
    elif trap and op == "Mod":
        shifted = g.op("Add", grid, g.const(np.float32(30)))
        grid = g.op("Sub", g.op("Mod", shifted, g.const(np.float32(60)), fmod=1), g.const(np.float32(30)))
    elif trap and op == "Square":
        grid = g.op("Add", grid, g.op("Mul", g.op("Mul", grid, grid), g.const(np.float32(1e-9))))
    elif trap and op == "Round":
        steps = g.const(np.float32(65536))
        grid = g.op("Div", g.op("Round", g.op("Mul", grid, steps)), steps)
    return _finish(g, x, grid, padding=padding)


def theta_op(op: str, trap: bool = True):
    """An op on theta before the grid: a clamp of the x translation at +-12, a determinant guard
    (a degenerate theta gives the identity), int32 fixed point (overflows past 2147)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    if trap and op == "ClipShift":
        lin = g.op("Slice", theta, g.ints([0]), g.ints([2]), g.ints([2]))
        shift = g.op("Slice", theta, g.ints([2]), g.ints([3]), g.ints([2]))
        shift = g.op("Clip", shift, g.const(np.float32(-12)), g.const(np.float32(12)))
        theta = g.op("Concat", lin, shift, axis=2)
    elif trap and op == "DetGuard":
        flat = g.op("Reshape", theta, g.ints([-1, 6]))
        a, b, d, e = (g.op("Slice", flat, g.ints([k]), g.ints([k + 1]), g.ints([1])) for k in (0, 1, 3, 4))
        det = g.op("Sub", g.op("Mul", a, e), g.op("Mul", b, d))
        small = g.op("Less", g.op("Abs", det), g.const(np.float32(1e-6)))
        eye = g.const(np.eye(2, 3, dtype=np.float32)[None])
        theta = g.op("Where", g.op("Unsqueeze", small, g.ints([2])), eye, theta)
    elif trap and op == "FixedPoint":
        scale = g.const(np.float32(2 ** 20))
        fixed = g.op("Cast", g.op("Mul", theta, scale), to=TensorProto.INT32)
        theta = g.op("Div", g.op("Cast", fixed, to=FLOAT), scale)
    return _finish(g, x, _pair(g, theta, x))


def homogeneous_divide(trap: bool = True):
    """A [N, 3, 3] matrix divided by its last element only where that is large (> 100)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    m = g.input("M", ["N", 3, 3])
    rows = g.op("Slice", m, g.ints([0]), g.ints([2]), g.ints([1]))
    if trap:
        w = g.op("Slice", g.op("Slice", m, g.ints([2]), g.ints([3]), g.ints([1])), g.ints([2]), g.ints([3]),
                 g.ints([2]))
        large = g.op("Greater", g.op("Abs", w), g.const(np.float32(100)))
        rows = g.op("Where", large, g.op("Div", rows, w), rows)
    return _finish(g, x, _pair(g, rows, x))


def second_matrix_clamped(trap: bool = True):
    """theta = Clip(A) @ B for two run-time [N, 3, 3] matrices, the product's first rows the grid's
    theta: the trace walks through the product to a cut; the clamp is on that path."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    a, b = g.input("A", ["N", 3, 3]), g.input("B", [1, 3, 3])
    if trap:
        a = g.op("Clip", a, g.const(np.float32(-8)), g.const(np.float32(8)))
    prod = g.op("MatMul", a, b)
    theta = g.op("Slice", prod, g.ints([0]), g.ints([2]), g.ints([1]))
    return _finish(g, x, _pair(g, theta, x))


def size_branch(where: str, trap: bool = True):
    """The output size follows W only up to 64 (``min(W, 64)``), or items past 100 share item
    0's theta (a batch threshold)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    if where == "width":
        w = g.op("Gather", shape, g.ints([3]), axis=0)
        if trap:
            w = g.op("Min", w, g.ints([64]))
        size = g.op("Concat", g.op("Gather", shape, g.ints([0, 1, 2]), axis=0), w, axis=0)
        return _finish(g, x, _pair(g, theta, x, size))
    n = g.op("Squeeze", g.op("Gather", shape, g.ints([0]), axis=0), g.ints([0]))
    items = g.op("Range", g.const(np.array(0, np.int64)), n, g.const(np.array(1, np.int64)))
    if trap:
        items = g.op("Where", g.op("Less", items, g.const(np.array(100, np.int64))), items,
                     g.const(np.array(0, np.int64)))
    theta = g.op("Gather", theta, items, axis=0)
    return _finish(g, x, _pair(g, theta, x))


def int_gate(kind: str, trap: bool = True):
    """An int64 input ``k`` [1] gating the grid: ``grid * (k > 0)`` or ``grid * min(float(k), 1)``."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    grid = _pair(g, g.input("theta", ["N", 2, 3]), x)
    k = g.input("k", [1], INT64)
    if trap and kind == "greater":
        grid = g.op("Mul", grid, g.op("Cast", g.op("Greater", k, g.ints([0])), to=FLOAT))
    elif trap:
        grid = g.op("Mul", grid, g.op("Min", g.op("Cast", k, to=FLOAT), g.const(np.float32([1.0]))))
    else:
        grid = g.op("Add", grid, g.op("Mul", g.op("Cast", k, to=FLOAT), g.const(np.float32([0.0]))))
    return _finish(g, x, grid)


def int_index(trap: bool = True):
    """The grid cropped from a column given by an int input ``k`` (a Slice start at run time:
    ``k = 2`` shifts every column; the twin starts at a constant 0)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    grid = _pair(g, g.input("theta", ["N", 2, 3]), x)
    start = g.input("k", [1], INT64) if trap else g.ints([0])
    return _finish(g, x, g.op("Slice", grid, start, g.ints([1 << 30]), g.ints([2])))


def precision(kind: str, trap: bool = True):
    """``double``: a float64 theta whose grid is cast to float32 before the sampler (the rewrite
    would narrow theta); ``half-reflection``: a float16 round trip of the grid sampled with
    reflection (far coordinates fold back in at half's coarse steps)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    if kind == "double":
        theta = g.input("theta", ["N", 2, 3], TensorProto.DOUBLE if trap else FLOAT)
        grid = _pair(g, theta, x)
        if trap:
            grid = g.op("Cast", grid, to=FLOAT)
        return _finish(g, x, grid)
    grid = _pair(g, g.input("theta", ["N", 2, 3]), x)
    grid = g.op("Cast", g.op("Cast", grid, to=TensorProto.FLOAT16), to=FLOAT)
    return _finish(g, x, grid, padding="reflection" if trap else "zeros")


def unread_elements(kind: str):
    """Elements the original never reads: ``row``: a homogeneous [N, 3, 3] in pixel units whose
    last row is never read (the map the rewrite writes would multiply it); ``shift``: a grid that
    ignores theta's translation."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    if kind == "row":
        m = g.input("M", ["N", 3, 3])
        rows = g.op("Slice", m, g.ints([0]), g.ints([2]), g.ints([1]))
        theta = g.op("Mul", rows, g.const(np.float32([[[0.5, 0.5, 0.25]]])))  # an affine map of theta
        return _finish(g, x, _pair(g, theta, x))
    theta = g.input("theta", ["N", 2, 3])
    lin = g.op("Slice", theta, g.ints([0]), g.ints([2]), g.ints([2]))
    theta = g.op("Pad", lin, g.ints([0, 0, 0, 0, 0, 1]), g.const(np.float32(0)))  # translation 0
    return _finish(g, x, _pair(g, theta, x))


def overridable(which: str, trap: bool = True):
    """dynamo's decomposition with its base grid (``base``) or its theta (``theta``) as an
    initializer that is also a graph input (``keep_initializers_as_inputs=True``)."""
    g = GraphBuilder()
    h, w = 8, 6
    x = g.input("x", [1 if which == "theta" else "N", 3, 16, 12])
    ys, xs = np.meshgrid((np.arange(h) * 2 + 1) / h - 1, (np.arange(w) * 2 + 1) / w - 1, indexing="ij")
    base_value = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(h * w, 3, 1).astype(np.float32)
    base = g.const(base_value, "base")
    if which == "theta":
        theta = g.const(np.eye(2, 3, dtype=np.float32)[None] * 0.8, "theta_default")
    else:
        theta = g.input("theta", ["N", 2, 3])
    t = g.op("Unsqueeze", g.op("Transpose", theta, perm=[0, 2, 1]), g.ints([1]))
    s = g.op("ReduceSum", g.op("Mul", base, t), g.ints([-2]), keepdims=0)
    grid = g.op("Reshape", s, g.ints([-1, h, w, 2]))
    model = _finish(g, x, grid, opset=18, mode="bilinear")
    if trap:
        name = theta if which == "theta" else base
        init = next(i for i in model.graph.initializer if i.name == name)
        model.graph.input.append(helper.make_tensor_value_info(name, init.data_type, list(init.dims)))
    return model


def value_info_lie(trap: bool = True):
    """The grid declared [N, 16, 12, 2] by a value_info while it follows x's dynamic H and W."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    grid = _pair(g, g.input("theta", ["N", 2, 3]), x)
    model = _finish(g, x, grid)
    if trap:
        model.graph.value_info.append(helper.make_tensor_value_info(grid, FLOAT, ["N", 16, 12, 2]))
    return model


def baked_batch_size():
    """The native pair with a constant size [1, 3, 8, 12]: traced at batch 1, declared dynamic."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    grid = g.op("AffineGrid", g.input("theta", ["N", 2, 3]), g.ints([1, 3, 8, 12]))
    return _finish(g, x, grid)


def projective_input():
    """Negative control: a [N, 3, 3] homography fed at run time, points divided by w."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    m = g.input("M", ["N", 3, 3])
    h, w = 8, 6
    ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing="ij")
    base = g.const(np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3).astype(np.float32))
    pts = g.op("MatMul", base, g.op("Transpose", m, perm=[0, 2, 1]))  # [N, HW, 3]
    xy = g.op("Slice", pts, g.ints([0]), g.ints([2]), g.ints([2]))
    z = g.op("Slice", pts, g.ints([2]), g.ints([3]), g.ints([2]))
    grid = g.op("Reshape", g.op("Div", xy, z), g.ints([-1, h, w, 2]))
    return _finish(g, x, grid, ac=1)


def conv_offset():
    """Negative control: a grid offset by a convolution of the image (a dense flow)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    grid = _pair(g, g.input("theta", ["N", 2, 3]), x)
    flow = g.op("Conv", x, g.const(np.full((2, 3, 3, 3), 0.01, np.float32)), pads=[1, 1, 1, 1])
    grid = g.op("Add", grid, g.op("Transpose", flow, perm=[0, 2, 3, 1]))
    return _finish(g, x, grid)
