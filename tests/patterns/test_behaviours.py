"""What is written around the chain: --target affine-grid, --input-shape folding, theta's batch
broadcast, grids needed elsewhere, shared grids, align_corners disagreements, the size-1
warning, many identical chains, discovery, and the reference-kernel wrappers."""

import time

import numpy as np
import onnx
import pytest

import surgeon
from surgeon_patterns import PATTERNS, AffineGridSample
from surgeon_ops.node_kernels import affine_grid, fused_grid_sample

from ..builders import GraphBuilder, dynamo_chains, elementwise_homogeneous, native_pair
from ..error_bounds import affine_grid_bound, assert_warp_outputs, assert_within, gamma
from .fusing import fuse_alone, fuse_sample, inputs, torch_warp
from .rewritten_graphs import custom_nodes, op_counts
from .runner import attrs_of, ort_run, run_split


def warnings_of(result) -> str:
    return " | ".join(w for r in result.report.rewrites for w in r.warnings)


# -- --target affine-grid -----------------------------------------------------------------------

def test_target_affine_grid_native_dynamic():
    result = fuse_sample("affine_ts_opset20_2d_dynamic.onnx", target="affine-grid")
    assert op_counts(result.model) == {"Shape": 1, "custom.ops::AffineGrid": 1, "GridSample": 1}
    (grid,) = custom_nodes(result.model)
    assert attrs_of(grid) == {"align_corners": 0} and len(grid.input) == 2
    sampler = next(n for n in result.model.graph.node if n.op_type == "GridSample")
    assert attrs_of(sampler)["mode"] == "linear" and sampler.input[1] == grid.output[0]
    feeds = inputs([2, 3, 9, 7], [2, 2, 3])
    (got,) = run_split(result.model, feeds)
    assert_warp_outputs(got, torch_warp(feeds["x"], feeds["theta"], [9, 7], 0), feeds, align_corners=False, mode="bilinear", padding="zeros")


def test_target_affine_grid_keeps_dynamo_sampler():
    result = fuse_sample("affine_dynamo_opset18_2d.onnx", target="affine-grid")
    assert op_counts(result.model) == {"custom.ops::AffineGrid": 1, "GridSample": 1}
    (grid,) = custom_nodes(result.model)
    assert attrs_of(grid) == {"align_corners": 0, "output_size": [16, 12]}
    onnx.checker.check_model(result.model)


def test_target_affine_grid_replaces_aten_sampler():
    # Opset 15 has no standard GridSample: onnxruntime's contrib one reads the grid.
    result = fuse_sample("aten_fallback_opset15.onnx", target="affine-grid")
    assert op_counts(result.model) == {"custom.ops::AffineGrid": 1, "com.microsoft::GridSample": 1}
    feeds = inputs([2, 3, 16, 12], [2, 2, 3])
    (got,) = run_split(result.model, feeds)
    assert_warp_outputs(got, torch_warp(feeds["x"], feeds["theta"], [16, 12], 0), feeds, align_corners=False, mode="bilinear", padding="zeros")


def test_target_output_fuses_later_and_fused_output_is_stable():
    grid_form = fuse_sample("multi_chain.onnx", target="affine-grid").model
    assert op_counts(grid_form)["custom.ops::AffineGrid"] == 3
    again = fuse_alone(grid_form, target="affine-grid")
    assert not again.report.rewrites  # already the target form: no loop
    fused = fuse_alone(grid_form)
    counts = op_counts(fused.model)
    assert counts["custom.ops::FusedGridSample"] == 2 and counts["custom.ops::AffineGrid"] == 1
    assert not fuse_alone(fused.model).report.rewrites


def test_unknown_target_refused():
    model = native_pair()
    result = fuse_alone(model, target="tensorrt-plugin")
    assert not result.report.rewrites
    assert result.model.graph.SerializeToString() == model.graph.SerializeToString()
    assert "unknown target 'tensorrt-plugin'" in result.report.refusals[0].reason


# -- sizes and batches --------------------------------------------------------------------------

def test_input_shape_folds_dynamic_size():
    result = fuse_sample("affine_ts_opset20_2d_dynamic.onnx", input_shapes={"x": [2, 3, 16, 12]})
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 1}
    (node,) = custom_nodes(result.model)
    assert attrs_of(node)["output_size"] == [16, 12] and len(node.input) == 2


def test_theta_batch_broadcast_stays_explicit():
    model = fuse_sample("affine_expand_ts_opset20.onnx").model
    (node,) = custom_nodes(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    expand = producers[node.input[1]]
    assert expand.op_type == "Expand" and expand.input[0] == "theta"
    concat = producers[expand.input[1]]
    gather = producers[concat.input[0]]
    assert (concat.op_type, gather.op_type, producers[gather.input[0]].op_type) == ("Concat", "Gather", "Shape")
    assert producers[gather.input[0]].input[0] == "x"


def test_grid_with_another_reader_gets_affine_grid():
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    theta = g.input("theta", ["N", 2, 3])
    grid = g.op("AffineGrid", theta, g.op("Shape", x))
    g.op("GridSample", x, grid, out="y")
    g.op("ReduceMean", grid, out="grid_mean", keepdims=0)
    g.output("y")
    g.output("grid_mean")
    model = g.model(20)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::AffineGrid": 1, "GridSample": 1, "ReduceMean": 1}
    assert "also read by" in warnings_of(result)
    feeds = inputs([2, 3, 16, 12], [2, 2, 3])
    (y, grid_mean), (want_y, want_mean) = run_split(result.model, feeds), ort_run(model, feeds)
    assert_warp_outputs(y, want_y, feeds)
    # a mean of grid coordinates: each within the grid's bound, so is their mean (and its rounding)
    bound = affine_grid_bound(feeds["theta"]).max() + 2 * gamma(16 * 12, np.float32) * np.abs(want_mean)
    assert_within(grid_mean, want_mean, bound, "the grid's mean")


def test_two_samplers_sharing_a_grid_both_fuse():
    g = GraphBuilder()
    x, x2 = g.input("x", ["N", 3, 16, 12]), g.input("x2", ["N", 1, 16, 12])
    theta = g.input("theta", ["N", 2, 3])
    grid = g.op("AffineGrid", theta, g.op("Shape", x))
    g.op("GridSample", x, grid, out="y")
    g.op("GridSample", x2, grid, out="y2", mode="nearest")
    g.output("y")
    g.output("y2")
    model = g.model(20)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 2}
    feeds = dict(inputs([2, 3, 16, 12], [2, 2, 3]), x2=np.random.default_rng(1).random((2, 1, 16, 12), np.float32))
    (y, y2), (want_y, want_y2) = run_split(result.model, feeds), ort_run(model, feeds)
    assert_warp_outputs(y, want_y, feeds)
    assert_warp_outputs(y2, want_y2, {"x": feeds["x2"], "theta": feeds["theta"]}, mode="nearest")


def test_align_corners_disagreement_keeps_sampler():
    g = GraphBuilder()
    x = g.input("x", ["N", 3, 16, 12])
    grid = g.op("AffineGrid", g.input("theta", ["N", 2, 3]), g.op("Shape", x), align_corners=1)
    g.op("GridSample", x, grid, out="y", align_corners=0)
    g.output("y")
    model = g.model(20)
    result = fuse_alone(model)
    assert op_counts(result.model) == {"custom.ops::AffineGrid": 1, "GridSample": 1}
    assert attrs_of(custom_nodes(result.model)[0])["align_corners"] == 1
    assert "align_corners=1 and the sampler 0" in warnings_of(result)
    feeds = inputs([2, 3, 16, 12], [2, 2, 3])
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds)


# -- align_corners=1 and size-1 dims ------------------------------------------------------------
# ONNX puts a size-1 dim's coordinate at -1, torch (the contract) at 0: the rewrite moves theta so
# that the op computes the original's grid (fusing and warning was a silent wrong rewrite).

def test_size_one_static_matches_the_original():
    model = native_pair(ac=1, out=[1, 8])
    result = fuse_alone(model)
    assert op_counts(result.model) == {"MatMul": 1, "custom.ops::FusedGridSample": 1}
    feeds = inputs([2, 3, 16, 12], [2, 2, 3])
    (want,) = ort_run(model, feeds)
    (got,) = run_split(result.model, feeds)
    assert_warp_outputs(got, want, feeds)
    assert np.abs(want - torch_warp(feeds["x"], feeds["theta"], [1, 8], 1)).max() > 1e-2  # torch differs


def test_size_one_in_general_path_matches_the_original():
    # np.linspace(-1, 1, 1) == [-1]: this region follows ONNX's convention for a size-1 dim.
    model = elementwise_homogeneous(out=(1, 8))
    result = fuse_alone(model)
    assert op_counts(result.model)["custom.ops::FusedGridSample"] == 1
    feeds = inputs([2, 3, 16, 12], [2, 3, 3], "M")
    assert_warp_outputs(run_split(result.model, feeds)[0], ort_run(model, feeds)[0], feeds)


def test_size_one_dynamic_matches_the_original_at_run_time():
    model = native_pair(ac=1, size="shape", symbolic_spatial=True)
    result = fuse_alone(model)
    assert not warnings_of(result)
    assert {"Equal", "MatMul", "custom.ops::FusedGridSample"} <= set(op_counts(result.model))
    for shape in ([2, 3, 1, 7], [2, 3, 5, 1], [1, 3, 1, 1], [3, 3, 6, 5]):
        feeds = inputs(shape, [shape[0], 2, 3])
        (want,) = ort_run(model, feeds)
        (got,) = run_split(result.model, feeds)
        assert_warp_outputs(got, want, feeds, what=str(shape))


def test_no_size_one_warning_without_size_one():
    assert not warnings_of(fuse_sample("affine_dynamo_opset20_2d_ac1.onnx"))
    assert not warnings_of(fuse_sample("lib_homogeneous_ts_opset17.onnx"))


# -- scale, discovery, kernels ------------------------------------------------------------------

def test_identical_chains_are_probed_once():
    model = dynamo_chains(200)
    pattern = AffineGridSample()
    start = time.perf_counter()
    result = surgeon.fuse(model, plugins=[pattern])
    elapsed = time.perf_counter() - start
    assert op_counts(result.model) == {"custom.ops::FusedGridSample": 200}
    assert len(pattern._recognise.verdicts) == 1
    assert elapsed < 10, elapsed


def test_discovered_through_entry_point():
    assert PATTERNS == [AffineGridSample]
    result = surgeon.fuse(native_pair())
    assert [r.pattern for r in result.report.rewrites] == ["affine-grid-sample"]


@pytest.mark.parametrize("with_size_input", [False, True])
def test_kernel_wrappers(with_size_input):
    feeds = inputs([2, 3, 9, 7], [2, 2, 3])
    x, theta = feeds["x"], feeds["theta"]
    size = np.array([2, 3, 5, 6], np.int64)
    attrs = {"align_corners": 1, "mode": "bilinear", "padding_mode": "border"}
    extra = [size] if with_size_input else []
    if not with_size_input:
        attrs["output_size"] = [5, 6]
    (y,) = fused_grid_sample([x, theta, *extra], attrs)
    assert_warp_outputs(y, torch_warp(x, theta, [5, 6], 1, "bilinear", "border"), {"x": x, "theta": theta},
                        mode="bilinear", padding="border", align_corners=True)
    (grid,) = affine_grid([theta, *extra], attrs)
    assert grid.shape == (2, 5, 6, 2)
