"""float64 around an affine grid (issue 39, item 4). The contract's ops take float32 and float16
(ops/OPS.md), and the rewrite computes the grid in float32: a float32 theta cast to double, the
grid computed in double and cast back differs from it by float32 rounding only, and fuses; a
constant double grid that holds float32's precision (MONAI's) fits at float32's rounding and
fuses. A chain the contract cannot hold (a double image, a theta in double before a float image)
becomes ONNX's own AffineGrid + GridSample from opset 20 on, the grid computed in double as the
original computes it; refused below opset 20, for TensorRT, and where ONNX leaves the grid
undefined (align_corners=1 at a size of 1)."""

import numpy as np
import pytest
from onnx import TensorProto

from ..builders import GraphBuilder
from ..error_bounds import assert_warp_outputs
from .fusing import fuse_alone, refusal_reasons
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split

D, F, F16 = TensorProto.DOUBLE, TensorProto.FLOAT, TensorProto.FLOAT16
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


def test_the_native_pair_in_double_is_left_as_it_is():
    result = fuse_alone(model("double image"))
    assert not result.report.rewrites
    assert "already ONNX's own AffineGrid + GridSample, what this pattern writes" in refusal_reasons(result)


def decomposition(image=D, theta=D, opset=20, ac=0, dims=(16, 12), cast_grid=True):
    """dynamo's spelling in double: a base grid (constant, or from Shape(x) for symbolic dims) @
    theta^T, reshaped; ``theta`` double before a float image widens only the grid (``cast_grid``:
    cast to the image's type before the sampler, else sampled as computed)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, *dims], image)
    t = g.input("theta", ["N", 2, 3], theta)
    if all(isinstance(d, int) for d in dims):
        h, w = dims
        axis = (lambda n: np.linspace(-1, 1, n)) if ac else (lambda n: (np.arange(n) * 2 + 1) / n - 1)
        gy, gx = np.meshgrid(axis(h), axis(w), indexing="ij")
        base = g.const(np.stack([gx, gy, np.ones_like(gx)], -1).reshape(1, h * w, 3).astype(
            np.float64 if theta == D else np.float32), "base")
        shape = g.ints([-1, h, w, 2])
    else:  # linspace(-1, 1, n) from Shape(x): 0 / 0 at n = 1
        def axis_of(i):
            n = g.op("Cast", g.op("Gather", g.op("Shape", x), g.ints(i), axis=0), to=D)
            steps = g.op("Range", g.const(np.float64(0)), g.op("Squeeze", n), g.const(np.float64(1)))
            return g.op("Sub", g.op("Mul", g.op("Div", steps, g.op("Sub", n, g.const(np.float64(1)))),
                                    g.const(np.float64(2))), g.const(np.float64(1)))
        n_h, n_w = (g.op("Gather", g.op("Shape", x), g.ints([i]), axis=0) for i in (2, 3))
        hw1 = g.op("Concat", n_h, n_w, g.ints([1]), axis=0)
        gx = g.op("Expand", g.op("Reshape", axis_of(3), g.ints([1, -1, 1])), hw1)
        gy = g.op("Expand", g.op("Reshape", axis_of(2), g.ints([-1, 1, 1])), hw1)
        ones = g.op("Expand", g.const(np.ones((1, 1, 1))), hw1)
        base = g.op("Reshape", g.op("Concat", gx, gy, ones, axis=2), g.ints([1, -1, 3]))
        shape = g.op("Concat", g.op("Shape", x, start=0, end=1), n_h, n_w, g.ints([2]), axis=0)
    grid = g.op("Reshape", g.op("MatMul", base, g.op("Transpose", t, perm=[0, 2, 1])), shape)
    if image != theta and cast_grid:
        grid = g.op("Cast", grid, to=image)
    g.op("GridSample", x, grid, out="y", align_corners=ac)
    g.output("y", image)
    return g.model(opset)


@pytest.mark.parametrize("image, theta, ac", [(D, D, 0), (D, D, 1), (F, D, 0), (F16, F, 0)])
def test_a_decomposition_the_contract_cannot_hold_becomes_onnxs_own_pair(image, theta, ac):
    # (F16, F): a float32 grid sampled from a half image as it is, no cast between
    original = decomposition(image=image, theta=theta, ac=ac, cast_grid=image != F16)
    result = fuse_alone(original)
    counts = op_counts(result.model)
    assert counts["AffineGrid"] == 1 and counts["GridSample"] == 1 and "MatMul" not in counts, counts
    [rewrite] = result.report.rewrites
    assert any("wrote ONNX's own AffineGrid + GridSample" in w for w in rewrite.warnings), rewrite.warnings
    [grid_op] = [n for n in result.model.graph.node if n.op_type == "AffineGrid"]
    assert [a.i for a in grid_op.attribute if a.name == "align_corners"] == [ac]
    rng = np.random.default_rng(1)
    dtype = {D: np.float64, F: np.float32, F16: np.float16}[image]
    for batch in (1, 3):
        feeds = {"x": rng.standard_normal((batch, 3, 16, 12)).astype(dtype),
                 "theta": (THETA[None].repeat(batch, 0) + 0.2 * rng.standard_normal((batch, 2, 3))).astype(
                     np.float64 if theta == D else np.float32)}
        got, want = run_split(result.model, feeds)[0], ort_run(original, feeds)[0]
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=0, atol={D: 1e-12, F: 1e-5, F16: 2e-3}[image])
    again = fuse_alone(result.model)  # what it wrote is left alone
    assert not again.report.rewrites and not again.report.refusals


@pytest.mark.parametrize("kwargs, reason", [
    ({"opset": 18}, "ONNX's own AffineGrid would take it, from opset 20 (the model has 18)"),
    ({"ac": 1, "dims": ("H", "W")}, "with align_corners=1 leaves a size of 1 undefined"),
])
def test_where_onnxs_own_pair_cannot_hold_it_either_a_double_image_is_refused(kwargs, reason):
    result = fuse_alone(decomposition(**kwargs))
    assert not result.report.rewrites, result.report.summary()
    assert "the image is double: custom.ops ops take float32 or float16" in refusal_reasons(result)
    assert reason in refusal_reasons(result), refusal_reasons(result)


def test_tensorrt_is_not_offered_onnxs_own_pair():
    result = fuse_alone(decomposition(), options={"target": "tensorrt"})
    assert not result.report.rewrites
    assert refusal_reasons(result).strip().endswith("custom.ops ops take float32 or float16 (ops/OPS.md)")
