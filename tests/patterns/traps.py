"""Models that were fused and computed something else (issue 20), built with onnx.helper: each
class of silent wrong rewrite, and its linear twin (the same graph without the trap)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, numpy_helper

from ..builders import GraphBuilder

ELEMENTWISE_OPS = ("Abs", "Relu", "Round", "Sign", "Floor", "Clip", "Neg")


def coefficient_op(op: str | None, index: int, out=(10, 8), ac: int = 0, opset: int = 18):
    """theta read coefficient by coefficient (Reshape to [N, 6], one Slice each), ``op`` applied to
    coefficient ``index`` (None: no op, the linear twin), constant coordinate planes. Clip keeps
    [-1, 1]: the identity for every translation an image shows, not beyond."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    flat = g.op("Reshape", g.input("theta", ["N", 2, 3]), g.ints([-1, 6]))
    coef = [g.op("Unsqueeze", g.op("Slice", flat, g.ints([k]), g.ints([k + 1]), g.ints([1])), g.ints([2]))
            for k in range(6)]
    if op == "Clip":
        coef[index] = g.op("Clip", coef[index], g.const(np.float32(-1)), g.const(np.float32(1)))
    elif op:
        coef[index] = g.op(op, coef[index])
    h, w = out
    lin = [np.linspace(-1, 1, n) * (1 if ac else (n - 1) / n) for n in (h, w)]
    ys, xs = np.meshgrid(*lin, indexing="ij")
    px, py = g.const(xs[None].astype(np.float32), "plane_x"), g.const(ys[None].astype(np.float32), "plane_y")

    def row(a, b, c):
        return g.op("Add", g.op("Add", g.op("Mul", a, px), g.op("Mul", b, py)), c)

    gx, gy = row(*coef[0:3]), row(*coef[3:6])
    grid = g.op("Concat", g.op("Unsqueeze", gx, g.ints([3])), g.op("Unsqueeze", gy, g.ints([3])), axis=3)
    g.op("GridSample", x, grid, out="y", align_corners=ac)
    g.output("y")
    return g.model(opset)


def size_one_special(value: float = 0.5, with_theta: bool = True):
    """A run-time linspace over H (align_corners=1) that puts a single row at ``value``: neither
    torch's 0, ONNX's -1 nor onnxruntime's +1, so there is no theta the op could read. Without
    a theta, the grid is the base scaled and shifted by constants, expanded to the batch."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", 12])
    theta = g.input("theta", ["N", 2, 3]) if with_theta else None
    h = g.op("Gather", g.op("Shape", x), g.ints([2]), axis=0)
    hf = g.op("Cast", h, to=TensorProto.FLOAT)
    steps = g.op("Cast", g.op("Range", g.const(np.array(0, np.int64)), g.op("Squeeze", h, g.ints([0])),
                              g.const(np.array(1, np.int64))), to=TensorProto.FLOAT)
    span = g.op("Max", g.op("Sub", hf, g.const(np.float32(1))), g.const(np.float32(1)))
    ys = g.op("Sub", g.op("Div", g.op("Mul", steps, g.const(np.float32(2))), span), g.const(np.float32(1)))
    ys = g.op("Where", g.op("Equal", h, g.ints([1])), g.const(np.float32([value])), ys)
    xs = g.const(np.linspace(-1, 1, 12).astype(np.float32), "xs")
    hw = g.op("Concat", h, g.ints([12]), axis=0)
    plane_y = g.op("Expand", g.op("Unsqueeze", ys, g.ints([1])), hw)
    plane_x = g.op("Expand", g.op("Unsqueeze", xs, g.ints([0])), hw)
    ones = g.op("ConstantOfShape", hw, value=numpy_helper.from_array(np.ones(1, np.float32)))
    base = g.op("Concat", *(g.op("Unsqueeze", v, g.ints([2])) for v in (plane_x, plane_y, ones)), axis=2)
    n = g.op("Gather", g.op("Shape", x), g.ints([0]), axis=0)
    if theta is None:
        xy = g.op("Slice", base, g.ints([0]), g.ints([2]), g.ints([2]))
        moved = g.op("Add", g.op("Mul", xy, g.const(np.float32([0.8, -0.6]))), g.const(np.float32([0.1, -0.2])))
        grid = g.op("Expand", g.op("Unsqueeze", moved, g.ints([0])), g.op("Concat", n, h, g.ints([12, 2]), axis=0))
    else:
        points = g.op("MatMul", g.op("Reshape", base, g.ints([-1, 3])), g.op("Transpose", theta, perm=[0, 2, 1]))
        grid = g.op("Reshape", points, g.op("Concat", n, h, g.ints([12, 2]), axis=0))
    g.op("GridSample", x, grid, out="y", align_corners=1)
    g.output("y")
    return g.model(17)


def shared_symbol(opset: int = 20):
    """The image's W declared with the same symbol as its batch: x [N, 3, H, N]."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "N"])
    theta = g.input("theta", ["N", 2, 3])
    g.op("GridSample", x, g.op("AffineGrid", theta, g.op("Shape", x)), out="y")
    g.output("y", dims=["N", 3, "H", "N"])
    return g.model(opset)


def shifted_by(what: str, symbolic_w: bool = True):
    """AffineGrid(theta, Shape(x)) plus a shift of x coordinates by 1/W ("width"), by 1/(W + 1)
    ("width+1"), by 1/W + 1/W^2 ("width+square") or by 0.1 per batch item ("item"): an affine grid
    of a theta that depends on a dim as a power of it, otherwise, or on the item's index."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, "W" if symbolic_w else 12])
    shape = g.op("Shape", x)
    grid = g.op("AffineGrid", g.input("theta", ["N", 2, 3]), shape)
    if what.startswith("width"):
        w = g.op("Cast", g.op("Gather", shape, g.ints([3]), axis=0), to=TensorProto.FLOAT)
        inverse = g.op("Reciprocal", w)
        if what == "width+1":
            inverse = g.op("Reciprocal", g.op("Add", w, g.const(np.float32([1]))))
        elif what == "width+square":
            inverse = g.op("Add", inverse, g.op("Mul", inverse, inverse))
        step = g.op("Concat", inverse, g.const(np.zeros(1, np.float32)), axis=0)
    else:
        n = g.op("Squeeze", g.op("Gather", shape, g.ints([0]), axis=0), g.ints([0]))
        items = g.op("Cast", g.op("Range", g.const(np.array(0, np.int64)), n, g.const(np.array(1, np.int64))),
                     to=TensorProto.FLOAT)
        step = g.op("Mul", g.op("Reshape", items, g.ints([-1, 1, 1, 1])), g.const(np.float32([0.1, 0.0])))
    g.op("GridSample", x, g.op("Add", grid, step), out="y")
    g.output("y")
    return g.model(20)
