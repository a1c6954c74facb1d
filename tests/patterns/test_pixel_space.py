"""Grids in pixel units normalised by the image's size (torchvision's ``affine``, MONAI's
resamplers): affine_grid of a theta whose coefficients follow the dims, fused with those
coefficients computed from the model's own dims at run time, equal at every size."""

import numpy as np
import pytest
import torch
from onnx import TensorProto

from ..builders import GraphBuilder
from ..error_bounds import assert_warp_outputs
from .fusing import fuse_alone, refusal_reasons
from .pixel_grids import PIXEL_M, corner_pixels
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split

SIZES = ((8, 8), (5, 13), (21, 6), (1, 9), (32, 3))


def _dim(g: GraphBuilder, shape: str, axis: int) -> str:
    return g.op("Cast", g.op("Gather", shape, g.ints([axis]), axis=0), to=TensorProto.FLOAT)


def _centred(g: GraphBuilder, n: str) -> str:
    """Pixel centres about the middle, as torchvision writes them: arange(n) + 0.5 - n / 2."""
    steps = g.op("Cast", g.op("Range", g.const(np.float32(0)), g.op("Squeeze", n), g.const(np.float32(1))),
                 to=TensorProto.FLOAT)
    return g.op("Sub", g.op("Add", steps, g.const(np.float32([0.5]))), g.op("Mul", n, g.const(np.float32([0.5]))))


def torchvision_like(offset: float = 0.0):
    """base (pixels, the image's own size) @ theta^T / [W/2, H/2]: theta in pixel units.
    ``offset`` added to the half-size divisor makes it ``W/2 + offset``: no power of W."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    h, w = _dim(g, shape, 2), _dim(g, shape, 3)
    xs, ys = _centred(g, w), _centred(g, h)
    n_h = g.op("Cast", g.op("Gather", shape, g.ints([2]), axis=0), to=TensorProto.INT64)
    n_w = g.op("Cast", g.op("Gather", shape, g.ints([3]), axis=0), to=TensorProto.INT64)
    hw1 = g.op("Concat", n_h, n_w, g.ints([1]), axis=0)
    gx = g.op("Expand", g.op("Reshape", xs, g.ints([1, -1, 1])), hw1)
    gy = g.op("Expand", g.op("Reshape", ys, g.ints([-1, 1, 1])), hw1)
    ones = g.op("Expand", g.const(np.ones((1, 1, 1), np.float32)), hw1)
    base = g.op("Reshape", g.op("Concat", gx, gy, ones, axis=2), g.ints([1, -1, 3]))  # [1, H*W, 3]
    points = g.op("MatMul", base, g.op("Transpose", theta, perm=[0, 2, 1]))  # [N, H*W, 2]
    half = g.op("Concat", g.op("Mul", w, g.const(np.float32([0.5]))), g.op("Mul", h, g.const(np.float32([0.5]))),
                axis=0)
    if offset:
        half = g.op("Add", half, g.const(np.float32([offset, offset])))
    normalised = g.op("Div", points, half)
    n = g.op("Gather", shape, g.ints([0]), axis=0)
    grid = g.op("Reshape", normalised, g.op("Concat", n, n_h, n_w, g.ints([2]), axis=0))
    g.op("GridSample", x, grid, out="y", align_corners=0)
    g.output("y")
    return g.model(20)


MONAI_PIXELS = np.array([[0.9 * 3.5, -0.3 * 3.0, 1.5], [0.2 * 3.5, 1.1 * 3.0, -0.5]])  # per unit of affine_grid's base


def monai_like(power: int = 1):
    """A constant pixel grid (a static output size, 6 x 7) scaled by 2 / W and 2 / H of the
    input; ``power`` 2 makes it 2 / W^2 and 2 / H^2 (still powers), ``power`` -1 makes it
    2 (W - 1) / W^2 and 2 (H - 1) / H^2 (a factor of d - 1, as align_corners=True conventions have)."""
    g = GraphBuilder()
    x = g.input("x", [2, 3, "H", "W"])
    shape = g.op("Shape", x)
    ys, xs = np.meshgrid(np.arange(6, dtype=np.float32) - 2.5, np.arange(7, dtype=np.float32) - 3.0, indexing="ij")
    pixels = np.stack([0.9 * xs - 0.3 * ys + 1.5, 0.2 * xs + 1.1 * ys - 0.5], axis=-1)[None]  # [1, 6, 7, 2]
    scale = g.op("Concat", g.op("Reciprocal", _dim(g, shape, 3)), g.op("Reciprocal", _dim(g, shape, 2)), axis=0)
    if power == -1:
        sizes = g.op("Concat", _dim(g, shape, 3), _dim(g, shape, 2), axis=0)
        scale = g.op("Mul", g.op("Mul", scale, scale), g.op("Sub", sizes, g.const(np.float32([1.0]))))
    for _ in range(power - 1):
        scale = g.op("Mul", scale, g.op("Concat", g.op("Reciprocal", _dim(g, shape, 3)),
                                       g.op("Reciprocal", _dim(g, shape, 2)), axis=0))
    grid = g.op("Mul", g.op("Mul", g.const(pixels), scale), g.const(np.float32([2.0])))
    grid = g.op("Expand", grid, g.ints([2, 6, 7, 2]))
    g.op("GridSample", x, grid, out="y", align_corners=0)
    g.output("y")
    return g.model(20)


def _inputs(model, h, w, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {"x": rng.standard_normal((2, 3, h, w)).astype(np.float32)}
    if any(i.name == "theta" for i in model.graph.input):
        theta = np.array([[[0.9, -0.4, 1.5], [0.3, 1.1, -2.0]], [[1.2, 0.2, -0.5], [-0.1, 0.8, 0.7]]], np.float32)
        feeds["theta"] = theta
    return feeds


@pytest.mark.parametrize("kind,power", [("torchvision", 0), ("monai", 1), ("monai", 2), ("monai", -1)])
def test_pixel_space_grids_fuse_and_equal_at_every_size(kind, power):
    model = torchvision_like() if kind == "torchvision" else monai_like(power)
    result = fuse_alone(model)
    counts = op_counts(result.model)
    assert counts["custom.ops::FusedGridSample"] == 1 and "GridSample" not in counts, result.report.summary()
    for h, w in SIZES:
        feeds = _inputs(model, h, w)
        got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
        assert got.shape == want.shape
        theta = None if kind == "torchvision" else monai_theta(h, w, power)
        assert_warp_outputs(got, want, feeds, theta=theta, what=f"{h}x{w}")


def monai_theta(h, w, power):
    """The theta monai_like's grid is affine_grid of, at these dims."""
    scale = np.array([[2 / w ** power], [2 / h ** power]]) if power > 0 else \
        np.array([[2 * (w - 1) / w ** 2], [2 * (h - 1) / h ** 2]])
    return np.repeat((MONAI_PIXELS * scale)[None], 2, axis=0).astype(np.float32)


def test_a_divisor_that_is_no_power_of_the_dims_is_refused():
    # W/2 + 0.25 follows W, but no coefficient of it is a power of W: refused, naming the dim
    result = fuse_alone(torchvision_like(offset=0.25))
    assert not result.report.rewrites
    assert "depends on" in refusal_reasons(result), refusal_reasons(result)


def linspace_grid(threshold: float | None = 1.0, nan_x_at_one: bool = False, shift_y_at_one: float = 0.0,
                  grid_output: bool = False):
    """A base grid of torch.linspace(-1, 1, n) as dynamo writes it, per axis
    ``where(n > 1, (arange(n) / (n - 1) - 0.5) * 2, arange(n) * 0)``, times theta: a comparison of
    a size settled for every n but 1 (``threshold`` 3 compares with 3: n = 2 and 3 go the other way).
    ``threshold=None``: unguarded, as TorchScript writes it (0 / 0 at n = 1). After theta:
    ``nan_x_at_one`` adds 0 / (W - 1) to the x coordinates only, ``shift_y_at_one`` moves the y
    coordinates by that much where W = 1. ``grid_output``: the grid is a graph output too."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])

    def axis(a):
        n = g.op("Cast", g.op("Squeeze", g.op("Shape", x, start=a, end=a + 1)), to=TensorProto.FLOAT)
        steps = g.op("Range", g.const(np.float32(0)), n, g.const(np.float32(1)))
        spread = g.op("Mul", g.op("Sub", g.op("Div", steps, g.op("Sub", n, g.const(np.float32(1)))),
                                  g.const(np.float32(0.5))), g.const(np.float32(2)))
        if threshold is None:
            return spread
        return g.op("Where", g.op("Greater", n, g.const(np.float32(threshold))), spread,
                    g.op("Mul", steps, g.const(np.float32(0))))

    ys, xs = axis(2), axis(3)
    n_h = g.op("Shape", x, start=2, end=3)
    n_w = g.op("Shape", x, start=3, end=4)
    hw1 = g.op("Concat", n_h, n_w, g.ints([1]), axis=0)
    gx = g.op("Expand", g.op("Reshape", xs, g.ints([1, -1, 1])), hw1)
    gy = g.op("Expand", g.op("Reshape", ys, g.ints([-1, 1, 1])), hw1)
    ones = g.op("Expand", g.const(np.ones((1, 1, 1), np.float32)), hw1)
    base = g.op("Reshape", g.op("Concat", gx, gy, ones, axis=2), g.ints([1, -1, 3]))
    points = g.op("MatMul", base, g.op("Transpose", theta, perm=[0, 2, 1]))
    w = g.op("Cast", g.op("Squeeze", n_w), to=TensorProto.FLOAT)
    if nan_x_at_one:
        zero_by = g.op("Div", g.const(np.float32(0)), g.op("Sub", w, g.const(np.float32(1))))
        # [0/(W-1), 0]: a product with a mask would make y NaN too (0 * NaN)
        points = g.op("Add", points, g.op("Concat", g.op("Reshape", zero_by, g.ints([1])), g.const(np.float32([0])),
                                          axis=0))
    if shift_y_at_one:
        shift = g.op("Where", g.op("Equal", w, g.const(np.float32(1))), g.const(np.float32(shift_y_at_one)),
                     g.const(np.float32(0)))
        points = g.op("Add", points, g.op("Concat", g.const(np.float32([0])), g.op("Reshape", shift, g.ints([1])),
                                          axis=0))
    grid = g.op("Reshape", points, g.op("Concat", g.op("Shape", x, start=0, end=1), n_h, n_w, g.ints([2]), axis=0))
    g.op("GridSample", x, grid, out="y", align_corners=1)
    g.output("y")
    if grid_output:
        g.output(grid)
    return g.model(20)


def test_a_branch_on_sizes_settled_but_at_one_is_proved_on_both_sides():
    # n > 1 goes the other way only at n = 1: proved for n >= 2, then with H, W or both at 1
    model = linspace_grid()
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    for h, w in ((8, 8), (5, 13), (1, 9), (7, 1), (1, 1)):
        feeds = _inputs(model, h, w)
        assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, what=f"{h}x{w}")


def test_a_branch_on_sizes_past_one_is_refused():
    result = fuse_alone(linspace_grid(threshold=3.0))
    assert not result.report.rewrites
    assert "(Greater) compares values derived from the input dims" in refusal_reasons(result)


def test_a_grid_nan_at_size_one_is_refined_there_and_said():
    # Unguarded, n - 1 divides 0 by 0 at n = 1: the original's grid is NaN there, which engines
    # sample as they happen to. Fused for every size, a warning per dim; equal wherever the
    # original is defined, and at 1 the rewrite samples at affine_grid's coordinates.
    model = linspace_grid(threshold=None)
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    [rewrite] = result.report.rewrites
    assert sum("the original's grid is NaN (0/0 in its coordinates)" in w for w in rewrite.warnings) == 2
    for h, w in ((8, 8), (5, 13), (2, 2)):
        feeds = _inputs(model, h, w)
        assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, what=f"{h}x{w}")
    feeds = _inputs(model, 1, 9)
    fused = run_split(result.model, feeds)[0]
    x, theta = (torch.from_numpy(feeds[k]) for k in ("x", "theta"))
    grid = torch.nn.functional.affine_grid(theta, list(x.shape), align_corners=True)
    expected = torch.nn.functional.grid_sample(x, grid, align_corners=True).numpy()
    np.testing.assert_allclose(fused, expected, atol=1e-5)


@pytest.mark.parametrize("shift", [0.0, 0.5])
def test_a_grid_nan_at_size_one_frees_only_its_nan_coordinates(shift):
    # 0 / (W - 1) on x alone: at W = 1 the x coordinates are NaN and the y coordinates finite.
    # Those must still agree: y moved by 0.5 there is a real change, refused; unmoved, it fuses.
    result = fuse_alone(linspace_grid(nan_x_at_one=True, shift_y_at_one=shift))
    if shift:
        assert not result.report.rewrites
        reasons = refusal_reasons(result)
        assert "W=1" in reasons and "not finite and its finite coordinates are not" in reasons, reasons
    else:
        assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
        assert any("with W=1" in w and "NaN" in w for w in result.report.rewrites[0].warnings)


def test_a_grid_nan_at_size_one_that_another_reader_sees_is_refused():
    # The sampler takes a NaN coordinate as its engine happens to; a graph output holding the grid
    # shows the NaN itself, which an AffineGrid would not give
    result = fuse_alone(linspace_grid(threshold=None, grid_output=True))
    assert not result.report.rewrites
    assert "the original's grid is NaN (0/0 in its coordinates), and graph output" in refusal_reasons(result)


def corner_theta(h, w):
    """The theta corner_pixels' grid is affine_grid of (align_corners=False), at these dims."""
    m00, m01, m02 = PIXEL_M[0].astype(np.float64)
    m10, m11, m12 = PIXEL_M[1].astype(np.float64)
    theta = np.array([[m00, m01 * h / w, m00 - 1 + m01 * h / w + 2 * m02 / w],
                      [m10 * w / h, m11, m11 - 1 + m10 * w / h + 2 * m12 / h]])
    return np.repeat(theta[None], 2, axis=0).astype(np.float32)


def test_coefficients_that_are_sums_of_monomials_fuse_and_equal_at_every_size():
    model = corner_pixels()
    result = fuse_alone(model)
    counts = op_counts(result.model)
    assert counts["custom.ops::FusedGridSample"] == 1 and "GridSample" not in counts, result.report.summary()
    assert counts["Sum"] >= 1  # the translation's terms added at run time
    for h, w in SIZES + ((97, 45),):
        feeds = _inputs(model, h, w)
        got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
        assert got.shape == want.shape
        assert_warp_outputs(got, want, feeds, theta=corner_theta(h, w), what=f"{h}x{w}")


def test_a_divisor_that_no_sum_of_monomials_follows_is_refused():
    """2 / (W + 0.5): over a few nearby sizes four terms follow it closely; at 2 and at hundreds
    they do not."""
    result = fuse_alone(corner_pixels(offset=0.5))
    assert not result.report.rewrites
    assert "depends on" in refusal_reasons(result), refusal_reasons(result)
