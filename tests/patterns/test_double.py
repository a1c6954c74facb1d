"""float64 around an affine grid (issue 39, item 4). The contract's ops take float32 and float16
(ops/OPS.md), and the rewrite computes the grid in float32: a float32 theta cast to double, the
grid computed in double and cast back differs from it by float32 rounding only, and fuses; a
constant double grid that holds float32's precision (MONAI's) fits at float32's rounding and
fuses; an image in double is refused for what it is."""

import numpy as np
import pytest
from onnx import TensorProto

from ..builders import GraphBuilder
from ..error_bounds import assert_warp_outputs
from .fusing import fuse_alone, refusal_reasons
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split

D, F = TensorProto.DOUBLE, TensorProto.FLOAT
THETA = np.array([[0.9, 0.1, 0.05], [-0.1, 0.95, 0.02]])


def _float32_grid_in_double(h, w):
    xs, ys = (np.arange(w) * 2 + 1) / w - 1, (np.arange(h) * 2 + 1) / h - 1
    gx, gy = np.meshgrid(xs, ys)
    base = np.stack([gx, gy, np.ones_like(gx)], -1)
    return (base @ THETA.T).astype(np.float32).astype(np.float64)[None]


def model(kind, h=16, w=12):
    g = GraphBuilder()
    if kind == "double image":
        x = g.input("x", ["N", 3, h, w], D)
        g.op("GridSample", x, g.op("AffineGrid", g.input("theta", ["N", 2, 3], D), g.op("Shape", x)), out="y")
        g.output("y", D)
        return g.model(20)
    x = g.input("x", ["N", 3, h, w])
    if kind == "theta widened":
        grid = g.op("AffineGrid", g.op("Cast", g.input("theta", ["N", 2, 3]), to=D), g.op("Shape", x))
        grid = g.op("Cast", grid, to=F)
    else:  # a constant grid kept in double
        grid = g.op("Cast", g.const(_float32_grid_in_double(h, w)), to=F)
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    return g.model(20)


@pytest.mark.parametrize("kind", ["theta widened", "constant double grid"])
def test_double_with_float32_precision_fuses_and_equals(kind):
    small, big = model(kind), model(kind, 240, 320)
    assert op_counts(fuse_alone(small).model)["custom.ops::FusedGridSample"] == 1
    result = fuse_alone(big)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    rng = np.random.default_rng(0)
    theta = (THETA[None] + 0.1 * rng.standard_normal((1, 2, 3))).astype(np.float32)
    feeds = {"x": rng.random((1, 3, 240, 320), dtype=np.float32), "theta": theta}
    bound_theta = theta if kind == "theta widened" else THETA[None].astype(np.float32)
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(big, feeds)[0], feeds, theta=bound_theta,
                        mode="bilinear", padding="zeros", align_corners=False)


def test_a_double_image_is_refused_for_its_type():
    result = fuse_alone(model("double image"))
    assert not result.report.rewrites
    assert "the image is double: custom.ops ops take float32 or float16" in refusal_reasons(result)
