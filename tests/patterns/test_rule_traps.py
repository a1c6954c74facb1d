"""The proof's rules where their old assumptions failed (issue 39, "rewritten, yet wrong"): each
trap bends the grid only where no probe looks, and each is refused with the op named; beside it,
the same chain without the bend fuses."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from .builders import G
from .graphs import op_counts
from .helpers import fuse_alone, refusal_reasons


def grid_then(bend, opset=20, w="W"):
    """AffineGrid(theta, Shape(x)) -> ``bend(g, grid, shape)`` -> GridSample."""
    g = G()
    x = g.input("x", ["N", 3, 16, w])
    shape = g.op("Shape", x)
    grid = g.op("AffineGrid", g.input("theta", ["N", 2, 3]), shape)
    g.op("GridSample", x, bend(g, grid, shape), out="y")
    g.output("y")
    return g.model(opset)


def clip_attributes(g, grid, shape):  # Clip-6: bounds as attributes (the model's opset says which form)
    return g.op("Clip", grid, min=-20.0, max=20.0)


def clipped_base_grid(opset):
    """A grid built from a constant base grid, clipped by Clip-6 and sampled by onnxruntime's
    contrib GridSample (what exporters write below opset 16)."""
    g = G()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["N", 2, 3])
    grid = g.op("Reshape", g.op("MatMul", g.const(_base(16, 12)), g.op("Transpose", theta, perm=[0, 2, 1])),
                g.ints([-1, 16, 12, 2]))
    g.op("GridSample", x, clip_attributes(g, grid, None), out="y", domain="com.microsoft")
    g.output("y")
    return g.model(opset, extra_opsets=[("com.microsoft", 1)])


def scatter_max(g, grid, shape):  # a clamp at -20 written as a scatter of the max
    flat = g.op("Reshape", grid, g.ints([-1]))
    index = g.op("Range", g.const(np.array(0, np.int64)), g.op("Size", flat), g.const(np.array(1, np.int64)))
    floor = g.op("Expand", g.const(np.float32([-20.0])), g.op("Shape", flat))
    return g.op("Reshape", g.op("ScatterElements", flat, index, floor, axis=0, reduction="max"), g.op("Shape", grid))


def min_of_counted_width(g, grid, shape):  # Min(ReduceSum(ConstantOfShape(W)), 128): W itself, past 128 not
    width = g.op("Gather", shape, g.ints([3]), axis=0)
    ones = g.op("ConstantOfShape", width,
                value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))
    counted = g.op("Min", g.op("ReduceSum", ones, keepdims=0), g.const(np.float32(128)))
    return g.op("Mul", grid, g.op("Div", counted, g.op("Cast", width, to=TensorProto.FLOAT)))


@pytest.mark.parametrize("bend,opset,said", [
    (clip_attributes, 10, "clamps"),
    (scatter_max, 20, "(max) combines values that depend on the variables otherwise than by adding"),
    (min_of_counted_width, 20, "branch"),
])
def test_a_bend_only_far_away_is_refused(bend, opset, said):
    model = clipped_base_grid(opset) if opset < 20 else grid_then(bend, opset)
    result = fuse_alone(model)
    assert not result.report.rewrites, result.report.summary()
    assert said in refusal_reasons(result)


def _base(h, w):
    xs = (np.arange(w) * 2 + 1) / w - 1
    ys = (np.arange(h) * 2 + 1) / h - 1
    gx, gy = np.meshgrid(xs, ys)
    return np.stack([gx, gy, np.ones_like(gx)], -1).reshape(1, h * w, 3).astype(np.float32)


def test_the_same_chains_without_a_bend_fuse():
    result = fuse_alone(grid_then(lambda g, grid, shape: grid))
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1
    g = G()
    x = g.input("x", ["N", 3, 16, 12])
    grid = g.op("Reshape", g.op("MatMul", g.const(_base(16, 12)), g.op("Transpose", g.input("theta", ["N", 2, 3]),
                                                                           perm=[0, 2, 1])), g.ints([-1, 16, 12, 2]))
    g.op("GridSample", x, grid, out="y", domain="com.microsoft")
    g.output("y")
    result = fuse_alone(g.model(10, extra_opsets=[("com.microsoft", 1)]))
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
