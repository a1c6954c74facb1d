"""The proof's rules where their old assumptions failed (issue 39, "rewritten, yet wrong"): each
trap bends the grid only where no probe looks, and each is refused with the op named; beside it,
the same chain without the bend fuses."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from ..builders import GraphBuilder
from .fusing import fuse_alone, refusal_reasons
from .rewritten_graphs import op_counts


def grid_then(bend, opset=20, w="W"):
    """AffineGrid(theta, Shape(x)) -> ``bend(g, grid, shape)`` -> GridSample."""
    g = GraphBuilder()
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
    g = GraphBuilder()
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
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    grid = g.op("Reshape", g.op("MatMul", g.const(_base(16, 12)), g.op("Transpose", g.input("theta", ["N", 2, 3]),
                                                                           perm=[0, 2, 1])), g.ints([-1, 16, 12, 2]))
    g.op("GridSample", x, grid, out="y", domain="com.microsoft")
    g.output("y")
    result = fuse_alone(g.model(10, extra_opsets=[("com.microsoft", 1)]))
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()


def _floor_div(g, a, b):
    """Python's floor division as TorchScript writes it for sizes: Div, then a fix-up for
    negative operands (Less, Xor, Mod via Sub/Mul, Equal, Not, And, Where)."""
    zero = g.const(np.array(0, np.int64))
    out = g.op("Div", a, b)
    negative = g.op("Xor", g.op("Less", a, zero), g.op("Less", b, zero))
    mod = g.op("Sub", a, g.op("Mul", out, b))
    fix = g.op("And", negative, g.op("Not", g.op("Equal", mod, zero)))
    return g.op("Where", fix, g.op("Sub", out, g.const(np.array(1, np.int64))), out)


def floor_divided_size():
    """affine_grid(theta, [N, C, H // 2, W // 2]): the size computed with branches, fed only to
    AffineGrid's size (issue 39: refused as "a branch on sizes")."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    shape = g.op("Shape", x)
    dims = [g.op("Gather", shape, g.const(np.array(i, np.int64)), axis=0) for i in range(4)]
    two = g.const(np.array(2, np.int64))
    parts = [dims[0], dims[1], _floor_div(g, dims[2], two), _floor_div(g, dims[3], two)]
    size = g.op("Concat", *[g.op("Unsqueeze", p, g.ints([0])) for p in parts], axis=0)
    g.op("GridSample", x, g.op("AffineGrid", g.input("theta", ["N", 2, 3]), size), out="y")
    g.output("y")
    return g.model(20)


def test_a_size_computed_with_branches_only_sets_the_extent_and_fuses():
    from ..error_bounds import assert_warp_outputs
    from .runner import ort_run, run_split

    model = floor_divided_size()
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    rng = np.random.default_rng(0)
    for shape in ([2, 3, 7, 13], [1, 3, 16, 12], [3, 3, 9, 4], [1, 3, 301, 130]):
        feeds = {"x": rng.random(shape, dtype=np.float32),
                 "theta": (np.eye(2, 3) + 0.3 * rng.standard_normal((shape[0], 2, 3))).astype(np.float32)}
        got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
        assert got.shape == want.shape == (shape[0], 3, shape[2] // 2, shape[3] // 2)
        assert_warp_outputs(got, want, feeds, mode="bilinear", padding="zeros", align_corners=False)


def test_a_size_clamped_by_min_is_read_from_the_size_tensor_not_taken_for_w():
    # min(W, 64) is W at every probe; the rewrite must read the size the model computes, or it is
    # 36 pixels too wide at W = 100
    from ..error_bounds import assert_warp_outputs
    from . import traps_proof as T
    from .runner import ort_run, run_split

    model = T.size_branch("width")
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    rng = np.random.default_rng(1)
    for shape in ([2, 3, 8, 100], [1, 3, 5, 30], [2, 3, 4, 65]):
        feeds = {"x": rng.random(shape, dtype=np.float32),
                 "theta": (np.eye(2, 3) + 0.2 * rng.standard_normal((shape[0], 2, 3))).astype(np.float32)}
        got, want = run_split(result.model, feeds)[0], ort_run(model, feeds)[0]
        assert got.shape == want.shape == (shape[0], 3, shape[2], min(shape[3], 64))
        assert_warp_outputs(got, want, feeds, mode="bilinear", padding="zeros", align_corners=False)


def shifted_by_a_step_of_w(step):
    """grid + 0.5 * s(W) along x, s stepping or bending between the sizes a probe tries: W // 128
    (0 at every probe, 1 at W = 130), Floor(W / 128), Sigmoid(W) - 1, int(W * 0.01)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, "W"])
    shape = g.op("Shape", x)
    grid = g.op("AffineGrid", g.input("theta", ["N", 2, 3]), shape)
    w = g.op("Gather", shape, g.ints([3]), axis=0)
    wf = g.op("Cast", w, to=TensorProto.FLOAT)
    s = {"integer division": lambda: g.op("Cast", g.op("Div", w, g.ints([128])), to=TensorProto.FLOAT),
         "floor": lambda: g.op("Floor", g.op("Div", wf, g.const(np.float32([128])))),
         "sigmoid": lambda: g.op("Sub", g.op("Sigmoid", wf), g.const(np.float32([1]))),
         "truncating cast": lambda: g.op("Cast", g.op("Cast", g.op("Mul", wf, g.const(np.float32([0.01]))),
                                                       to=TensorProto.INT64), to=TensorProto.FLOAT)}[step]()
    shift = g.op("Concat", g.op("Mul", s, g.const(np.float32([0.5]))), g.const(np.zeros(1, np.float32)), axis=0)
    g.op("GridSample", x, g.op("Add", grid, shift), out="y")
    g.output("y")
    return g.model(20)


@pytest.mark.parametrize("step,op", [("integer division", "(Div) divides, rounding,"), ("floor", "(Floor) rounds"),
                                     ("sigmoid", "(Sigmoid) bends"), ("truncating cast", "(Cast) truncates")])
def test_a_coefficient_that_steps_between_probe_sizes_is_refused(step, op):
    result = fuse_alone(shifted_by_a_step_of_w(step))
    assert not result.report.rewrites, result.report.summary()
    assert op in refusal_reasons(result)


@pytest.mark.parametrize("end,fuses", [(100, False), (2 ** 63 - 1, True)])
def test_a_slice_with_fixed_bounds_on_a_dim_long_axis(end, fuses):
    # Slice(grid, 0, 100) along W is the whole axis at every probe below 100; at W = 120 the
    # original is 100 wide. A slice to the end of any length is the identity.
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, "W"])
    grid = g.op("AffineGrid", g.input("theta", ["N", 2, 3]), g.op("Shape", x))
    g.op("GridSample", x, g.op("Slice", grid, g.ints([0]), g.ints([end]), g.ints([2])), out="y")
    g.output("y")
    result = fuse_alone(g.model(20))
    assert bool(result.report.rewrites) == fuses, result.report.summary()
    if not fuses:
        assert "cuts an axis as long as an input dim at fixed bounds" in refusal_reasons(result)


def gathered(where):
    """Values picked at indices that follow the dims: theta's items at Range(N) (every item, in
    order), or the grid's channel at Min(W - 1, 1) (y past W = 1, x at W = 1)."""
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    if where == "items":
        n = g.op("Squeeze", g.op("Gather", shape, g.ints([0]), axis=0), g.ints([0]))
        items = g.op("Range", g.const(np.array(0, np.int64)), n, g.const(np.array(1, np.int64)))
        theta = g.op("Gather", theta, items, axis=0)
    grid = g.op("AffineGrid", theta, shape)
    if where == "channels":
        w = g.op("Gather", shape, g.ints([3]), axis=0)
        channel = g.op("Min", g.op("Sub", w, g.ints([1])), g.ints([1]))
        picked = g.op("Gather", grid, channel, axis=3)  # [N, H, W, 1]
        grid = g.op("Concat", picked, g.op("Slice", grid, g.ints([1]), g.ints([2]), g.ints([3])), axis=3)
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    return g.model(20)


def test_items_picked_at_indices_that_follow_the_batch_fuse_reading_each_element_once():
    from ..error_bounds import assert_warp_outputs
    from .runner import ort_run, run_split

    model = gathered("items")
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    feeds = {"x": np.random.default_rng(2).random((3, 3, 16, 9), dtype=np.float32),
             "theta": (np.eye(2, 3) + 0.2 * np.random.default_rng(3).standard_normal((3, 2, 3))).astype(np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, mode="bilinear",
                        padding="zeros", align_corners=False)


def test_grid_channels_picked_at_an_index_that_follows_w_are_refused():
    result = fuse_alone(gathered("channels"))
    assert not result.report.rewrites, result.report.summary()
    reasons = refusal_reasons(result)
    assert "picks values that depend on the variables at places that follow the input dims" in reasons or \
        "branch" in reasons, reasons


def test_the_shape_of_a_theta_shaped_value_is_no_second_theta():
    # kornia's affine / crop_by_transform_mat at opset 20: the grid's size takes N from the
    # shape of the expanded matrix that theta is also computed from (refused as "reads several
    # theta-shaped tensors")
    from ..error_bounds import assert_warp_outputs
    from .runner import ort_run, run_split

    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    expanded = g.op("Expand", g.input("M", ["B", 2, 3]), g.ints([1, 2, 3]))
    theta = g.op("Mul", expanded, expanded)  # not affine in the matrix: theta is the cut, as kornia's inverse is
    shape = g.op("Shape", x)
    size = g.op("Concat", g.op("Slice", g.op("Shape", expanded), g.ints([0]), g.ints([1])),
                g.op("Slice", shape, g.ints([1]), g.ints([4])), axis=0)
    g.op("GridSample", x, g.op("AffineGrid", theta, size), out="y")
    g.output("y")
    model = g.model(20)
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1, result.report.summary()
    feeds = {"x": np.random.default_rng(4).random((2, 3, 9, 7), dtype=np.float32),
             "M": (np.eye(2, 3) + 0.2 * np.random.default_rng(5).standard_normal((2, 2, 3))).astype(np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds,
                        theta=feeds["M"] ** 2, mode="bilinear", padding="zeros", align_corners=False)
