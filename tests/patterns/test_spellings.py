"""Spellings built by hand: the two unseen ones (run-time Range base grid with MatMul; a
homogeneous matrix read coefficient by coefficient), native pairs in 2-D and 3-D with static
and dynamic sizes, ATen and contrib samplers with every mode name, and negatives."""

import numpy as np
import onnx
import pytest

from ..builders import (GraphBuilder, aten_pair, baked_base_grid, elementwise_homogeneous, matmul_range_grid,
                        ms_matmul_pair, native_pair)
from ..error_bounds import assert_warp_outputs
from .fusing import RNG, fuse_alone, inputs, torch_grid, torch_warp
from .rewritten_graphs import custom_nodes, fused_settings, op_counts
from .runner import attrs_of, ort_run, run_split


def assert_untouched(model, result, reason: str):
    assert not result.report.rewrites
    assert result.model.graph.SerializeToString() == model.graph.SerializeToString()
    assert reason in " ".join(r.reason for r in result.report.refusals), result.report.summary()


# -- unseen spellings ---------------------------------------------------------------------------

def test_matmul_with_runtime_range_base_grid():
    model = matmul_range_grid()
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Shape": 1, "custom.ops::FusedGridSample": 1}
    (node,) = custom_nodes(result.model)
    assert len(node.input) == 3 and "output_size" not in attrs_of(node)  # H, W follow x at run time
    onnx.checker.check_model(result.model)
    for shape in ([2, 3, 10, 14], [3, 3, 7, 9]):
        feeds = inputs(shape, [shape[0], 2, 3])
        (want,) = ort_run(model, feeds)
        (got,) = run_split(result.model, feeds)
        assert_warp_outputs(got, want, feeds)
        assert_warp_outputs(got, torch_warp(feeds["x"], feeds["theta"], shape[2:], 0), feeds, align_corners=False, mode="bilinear", padding="zeros")


def test_elementwise_homogeneous_3x3():
    model = elementwise_homogeneous()
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Slice": 1, "custom.ops::FusedGridSample": 1}
    (node,) = custom_nodes(result.model)
    assert attrs_of(node) == {"align_corners": 1, "mode": "bilinear", "padding_mode": "border",
                              "output_size": [10, 8]}
    onnx.checker.check_model(result.model)
    feeds = inputs([2, 3, 16, 12], [2, 3, 3], "M")
    (want,) = ort_run(model, feeds)
    (got,) = run_split(result.model, feeds)
    assert_warp_outputs(got, want, feeds)


def test_volume_from_transposed_homogeneous_4x4():
    # points = base @ M^T: M^T is [N, 4, 4] too, the first cut tried; the retry cuts at M.
    g = GraphBuilder()
    x = g.input("x", ["N", 2, 6, 5, 4])
    m = g.input("M", ["N", 4, 4])
    d, h, w = 3, 4, 5
    zs, ys, xs = np.meshgrid(*((np.arange(n) * 2 + 1) / n - 1 for n in (d, h, w)), indexing="ij")
    base = np.stack([xs, ys, zs, np.ones_like(xs)], -1).reshape(-1, 4).astype(np.float32)
    points = g.op("MatMul", g.const(base), g.op("Transpose", m, perm=[0, 2, 1]))
    grid = g.op("Reshape", g.op("Slice", points, g.ints([0]), g.ints([3]), g.ints([2])), g.ints([-1, d, h, w, 3]))
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    model = g.model(20)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Slice": 1, "custom.ops::FusedGridSample": 1}
    assert attrs_of(custom_nodes(result.model)[0])["output_size"] == [d, h, w]
    feeds = inputs([2, 2, 6, 5, 4], [2, 4, 4], "M")
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_half_precision_decomposition():
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 8, 6], onnx.TensorProto.FLOAT16)
    theta = g.input("theta", ["N", 2, 3], onnx.TensorProto.FLOAT16)
    ys, xs = np.meshgrid((np.arange(8) * 2 + 1) / 8 - 1, (np.arange(6) * 2 + 1) / 6 - 1, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(48, 3, 1).astype(np.float16)
    t = g.op("Unsqueeze", g.op("Transpose", theta, perm=[0, 2, 1]), g.ints([1]))
    grid = g.op("Reshape", g.op("ReduceSum", g.op("Mul", g.const(base), t), g.ints([-2]), keepdims=0),
                g.ints([-1, 8, 6, 2]))
    g.op("GridSample", x, grid, out="y")
    g.output("y", onnx.TensorProto.FLOAT16, ["N", 3, 8, 6])
    result = fuse_alone(g.model(18))
    (node,) = custom_nodes(result.model)
    assert list(node.input) == ["x", "theta"] and attrs_of(node)["output_size"] == [8, 6]
    onnx.checker.check_model(result.model)


def test_baked_base_grid_under_symbolic_dims():
    # dynamo Dim.AUTO with align_corners=True: H and W are symbols, but the base grid constant
    # is [16*12, 3, 1]; no constant says 16 or 12. The probe finds them among 192's divisors.
    model = baked_base_grid("hw")
    # 16 x 12 does not bind: the Reshape takes any H * W = 192, and at 12 x 16 the grid is the
    # 16 x 12 one reshaped, no affine grid; refused while the dims are symbols, fused once fixed
    refused = fuse_alone(model)
    assert not refused.report.rewrites
    assert "as well as at the sizes baked into its constants" in refused.report.refusals[0].reason
    result = fuse_alone(model, input_shapes={"x": [3, 3, 16, 12], "theta": [3, 2, 3]})
    (node,) = custom_nodes(result.model)
    assert attrs_of(node) == {"align_corners": 1, "mode": "bilinear", "padding_mode": "zeros", "output_size": [16, 12]}
    feeds = inputs([3, 3, 16, 12], [3, 2, 3])
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


# -- native pairs -------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("size", ["static", "shape"])
def test_native_pair(dims, size):
    spatial = [6, 5, 4][-dims:]
    model = native_pair(dims=dims, size=size, spatial_in=spatial, symbolic_spatial=size == "shape",
                        out=[5, 7, 6][-dims:])
    result = fuse_alone(model)
    (node,) = custom_nodes(result.model)
    counts = op_counts(result.model)
    if size == "static":
        assert counts == {"custom.ops::FusedGridSample": 1}
        assert attrs_of(node)["output_size"] == [5, 7, 6][-dims:]
    else:  # size = Shape(x), reused as the size input
        assert counts == {"Shape": 1, "custom.ops::FusedGridSample": 1}
        assert len(node.input) == 3
    for batch in (2, 3):
        feeds = inputs([batch, 3, *spatial], [batch, dims, dims + 1])
        (want,) = ort_run(model, feeds)
        (got,) = run_split(result.model, feeds)
        assert_warp_outputs(got, want, feeds)


def test_computed_output_size_reuses_the_size_tensor():
    # affine_grid(theta, (N, C, H // 2, W // 2)) with H, W dynamic: not copies of input dims, so
    # the model's own size tensor becomes the size input (its nodes stay).
    g = GraphBuilder()
    x = g.input("x", ["N", 3, "H", "W"])
    theta = g.input("theta", ["N", 2, 3])
    shape = g.op("Shape", x)
    half = g.op("Div", g.op("Slice", shape, g.ints([2]), g.ints([4]), g.ints([0])), g.ints([2]))
    size = g.op("Concat", g.op("Slice", shape, g.ints([0]), g.ints([2]), g.ints([0])), half, axis=0)
    g.op("GridSample", x, g.op("AffineGrid", theta, size), out="y")
    g.output("y")
    model = g.model(20)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Shape": 1, "Slice": 2, "Div": 1, "Concat": 1, "custom.ops::FusedGridSample": 1}
    (node,) = custom_nodes(result.model)
    assert node.input[2] == size
    for shape_ in ([2, 3, 16, 12], [3, 3, 10, 14]):
        feeds = inputs(shape_, [shape_[0], 2, 3])
        assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


@pytest.mark.parametrize("opset_mode, torch_mode", [("linear", "bilinear"), ("cubic", "bicubic"),
                                                     ("nearest", "nearest")])
def test_opset20_mode_names_map_to_torch(opset_mode, torch_mode):
    result = fuse_alone(native_pair(mode=opset_mode, padding="border"))
    assert fused_settings(result.model) == [(0, torch_mode, "border")]


def test_aten_enums_map_to_torch_names():
    model = aten_pair(mode=1, padding=2, ac=1)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 1}
    assert fused_settings(result.model) == [(1, "nearest", "reflection")]
    feeds = inputs([2, 3, 16, 12], [2, 2, 3])
    (got,) = run_split(result.model, feeds)
    assert_warp_outputs(got, torch_warp(feeds["x"], feeds["theta"], [16, 12], 1, "nearest", "reflection"), feeds,
                        mode="nearest", padding="reflection", align_corners=True)


def test_contrib_sampler_with_matmul_grid():
    model = ms_matmul_pair(mode="bicubic")
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 1}
    assert fused_settings(result.model) == [(0, "bicubic", "zeros")]
    feeds = inputs([2, 3, 16, 12], [2, 2, 3])
    (want,) = ort_run(model, feeds)
    (got,) = run_split(result.model, feeds)
    assert_warp_outputs(got, want, feeds)


def test_opset16_bicubic_name():
    model = ms_matmul_pair()
    node = model.graph.node[-1]
    node.domain = ""  # the same chain on a standard opset-16 GridSample
    for a in node.attribute:
        if a.name == "mode":
            a.s = b"bicubic"
    del model.opset_import[:]
    model.opset_import.append(onnx.helper.make_opsetid("", 16))
    assert fused_settings(fuse_alone(model).model) == [(0, "bicubic", "zeros")]


# -- negatives ----------------------------------------------------------------------------------

def test_projective_grid_untouched():
    model = elementwise_homogeneous(projective=True)
    assert_untouched(model, fuse_alone(model), "divides by a value that depends on the variables")


def test_grid_from_two_thetas_untouched():
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    a, b = g.input("theta", ["N", 2, 3]), g.input("theta2", ["N", 2, 3])
    size = g.op("Shape", x)
    grid = g.op("Add", g.op("AffineGrid", a, size), g.op("AffineGrid", b, size))
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    model = g.model(20)
    assert_untouched(model, fuse_alone(model), "several theta-shaped tensors")


def test_constant_theta_fuses():
    # AffineGrid of a fixed theta (a buffer): theta stays a constant the fused op reads.
    g = GraphBuilder()
    x = g.input("x", [1, 3, 16, 12])
    theta = g.const(np.array([[[0.8, 0.2, 0.1], [-0.1, 0.9, 0.0]]], np.float32), "fixed_theta")
    grid = g.op("AffineGrid", theta, g.ints([1, 3, 8, 6]))
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    model = g.model(20)
    result = fuse_alone(model)
    (node,) = custom_nodes(result.model)
    assert node.input[1] == "fixed_theta_1" and attrs_of(node)["output_size"] == [8, 6]
    feeds = {"x": RNG.random((1, 3, 16, 12), dtype=np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_constant_grid_is_fitted():
    # A grid folded into an initializer: theta is fitted to it, and only an exact fit counts.
    theta = np.array([[[0.9, -0.2, 0.05], [0.1, 1.1, -0.1]]])
    g = GraphBuilder()
    x = g.input("x", [1, 3, 16, 12])
    grid = g.const(torch_grid(theta, [7, 5], 1), "folded_grid")
    g.op("GridSample", x, grid, out="y", align_corners=1)
    g.output("y")
    model = g.model(17)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 1}
    feeds = {"x": RNG.random((1, 3, 16, 12), dtype=np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_fixed_pixel_space_matrix_is_fitted():
    # torchvision's tensor affine: a fixed matrix in pixels, rescaled into the grid. Probing the
    # constant theta fails (it is not theta in normalised units); the constant grid still fits.
    h, w = 16, 12
    g = GraphBuilder()
    x = g.input("x", [1, 3, h, w])
    pixel_theta = g.const(np.array([[[0.95, -0.3, 1.5], [0.3, 0.95, -2.0]]], np.float32), "pixel_theta")
    ys, xs = np.meshgrid(np.arange(h) - (h - 1) / 2, np.arange(w) - (w - 1) / 2, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3).astype(np.float32)
    scaled = g.op("Div", g.op("Transpose", pixel_theta, perm=[0, 2, 1]), g.const(np.array([w / 2, h / 2], np.float32)))
    grid = g.op("Reshape", g.op("MatMul", g.const(base, "base"), scaled), g.ints([1, h, w, 2]))
    g.op("GridSample", x, grid, out="y", align_corners=0)
    g.output("y")
    model = g.model(17)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 1}
    feeds = {"x": RNG.random((1, 3, h, w), dtype=np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_run_time_pixel_space_matrix_is_mapped():
    # The same with theta an input: the grid is affine_grid(A(theta)) for a fixed linear map A,
    # found by probing; the rewrite applies A before the op (a MatMul on theta's coefficients).
    h, w = 16, 12
    g = GraphBuilder()
    x = g.input("x", ["N", 3, h, w])
    pixel_theta = g.input("theta", ["N", 2, 3])
    ys, xs = np.meshgrid(np.arange(h) - (h - 1) / 2, np.arange(w) - (w - 1) / 2, indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3).astype(np.float32)
    scaled = g.op("Div", g.op("Transpose", pixel_theta, perm=[0, 2, 1]), g.const(np.array([w / 2, h / 2], np.float32)))
    grid = g.op("Reshape", g.op("MatMul", g.const(base, "base"), scaled), g.ints([-1, h, w, 2]))
    g.op("GridSample", x, grid, out="y", align_corners=0)
    g.output("y")
    model = g.model(17)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Reshape": 2, "MatMul": 1, "custom.ops::FusedGridSample": 1}
    for batch in (1, 3):
        feeds = inputs([batch, 3, h, w], [batch, 2, 3])
        feeds["theta"][:, :, 2] *= 3  # translations in pixels
        assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_random_constant_grid_untouched():
    g = GraphBuilder()
    x = g.input("x", [1, 3, 16, 12])
    g.op("GridSample", x, g.const(RNG.uniform(-1, 1, (1, 7, 5, 2)).astype(np.float32)), out="y")
    g.output("y")
    model = g.model(17)
    assert_untouched(model, fuse_alone(model), "not affine_grid(theta) for any theta")


def test_flat_theta_rows():
    # theta as an fc layer emits it, [N, 6], read coefficient by coefficient.
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    params = g.input("params", ["N", 6])
    ys, xs = np.meshgrid((np.arange(9) * 2 + 1) / 9 - 1, (np.arange(7) * 2 + 1) / 7 - 1, indexing="ij")
    px, py = g.const(xs[None].astype(np.float32)), g.const(ys[None].astype(np.float32))
    c = [g.op("Unsqueeze", g.op("Gather", params, g.ints([k]), axis=1), g.ints([2])) for k in range(6)]
    gx = g.op("Add", g.op("Add", g.op("Mul", c[0], px), g.op("Mul", c[1], py)), c[2])
    gy = g.op("Add", g.op("Add", g.op("Mul", c[3], px), g.op("Mul", c[4], py)), c[5])
    grid = g.op("Concat", g.op("Unsqueeze", gx, g.ints([3])), g.op("Unsqueeze", gy, g.ints([3])), axis=3)
    g.op("GridSample", x, grid, out="y")
    g.output("y")
    model = g.model(17)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Reshape": 1, "custom.ops::FusedGridSample": 1}
    feeds = {"x": RNG.random((2, 3, 16, 12), dtype=np.float32),
             "params": (np.array([1, 0, 0, 0, 1, 0]) + 0.2 * RNG.standard_normal((2, 6))).astype(np.float32)}
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds, fused=result.model)


def test_bicubic_volume_refused():
    g = GraphBuilder()
    x = g.input("x", ["N", 2, 6, 5, 4])
    theta = g.input("theta", ["N", 3, 4])
    grid = g.op("AffineGrid", theta, g.op("Shape", x))
    g.op("GridSample", x, grid, out="y", mode="cubic")
    g.output("y")
    model = g.model(20)
    assert_untouched(model, fuse_alone(model), "bicubic sampling of a volume")
