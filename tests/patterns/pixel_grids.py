"""A grid built in pixel space from the image's dims (a constant pixel-space matrix on pixel
centres counted from the corner), shared by the pixel-space and the exact-grid tests."""

import numpy as np
from onnx import TensorProto

from ..builders import GraphBuilder


def _dim(g: GraphBuilder, shape: str, axis: int) -> str:
    return g.op("Cast", g.op("Gather", shape, g.ints([axis]), axis=0), to=TensorProto.FLOAT)


PIXEL_M = np.array([[0.94, -0.34, 3.0], [0.34, 0.94, -2.0]], np.float32)  # 20 degrees about pixel (0, 0), a shift


def corner_pixels(offset: float = 0.0):
    """A constant pixel-space matrix on pixel centres counted from the corner (arange(n) + 0.5,
    not centred on the image), normalised by 2 / W - 1: the fitted theta's translation is
    ``M00 - 1 + M01 H / W + 2 M02 / W``, a sum of monomials, not one. ``offset`` makes the
    divisor W + offset: no such sum."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    shape = g.op("Shape", x)
    h, w = _dim(g, shape, 2), _dim(g, shape, 3)

    def centres(n):
        steps = g.op("Cast", g.op("Range", g.const(np.float32(0)), g.op("Squeeze", n), g.const(np.float32(1))),
                     to=TensorProto.FLOAT)
        return g.op("Add", steps, g.const(np.float32([0.5])))

    n_h = g.op("Cast", g.op("Gather", shape, g.ints([2]), axis=0), to=TensorProto.INT64)
    n_w = g.op("Cast", g.op("Gather", shape, g.ints([3]), axis=0), to=TensorProto.INT64)
    hw1 = g.op("Concat", n_h, n_w, g.ints([1]), axis=0)
    gx = g.op("Expand", g.op("Reshape", centres(w), g.ints([1, -1, 1])), hw1)
    gy = g.op("Expand", g.op("Reshape", centres(h), g.ints([-1, 1, 1])), hw1)
    ones = g.op("Expand", g.const(np.ones((1, 1, 1), np.float32)), hw1)
    points = g.op("MatMul", g.op("Concat", gx, gy, ones, axis=2), g.const(PIXEL_M.T.copy()))  # [H, W, 2]
    size = g.op("Concat", w, h, axis=0)
    if offset:
        size = g.op("Add", size, g.const(np.float32([offset, offset])))
    grid = g.op("Sub", g.op("Div", g.op("Mul", points, g.const(np.float32([2.0]))), size), g.const(np.float32([1.0])))
    n = g.op("Gather", shape, g.ints([0]), axis=0)
    grid = g.op("Expand", g.op("Unsqueeze", grid, g.ints([0])), g.op("Concat", n, n_h, n_w, g.ints([2]), axis=0))
    g.op("GridSample", x, grid, out="y", align_corners=0)
    g.output("y")
    return g.model(20)
