"""Dims are what the ops make them (issue 39, item 8): a graph output's declared dims are not
believed, and a batch of 0 is a batch the original runs."""

import os

import numpy as np
import onnx
from onnx import helper

import surgeon

from ..error_bounds import assert_warp_outputs
from .fusing import MODELS, fuse_alone, fuse_sample
from .rewritten_graphs import op_counts
from .runner import ort_run, run_split


def _fused_output(model, feeds):
    """The fused model's one output, on the reference kernels (torch's refuses an empty batch)."""
    if all(np.shape(v)[0] for v in feeds.values()):
        return run_split(model, feeds)[0]
    (out,) = surgeon.run(model, feeds).values()
    return out


def _stale_output_declaration():
    """AffineGrid(theta, Shape(x)) sampled, y declared [2, 3, 8, 8] though it follows x."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 3, "H", "W"])
    theta = helper.make_tensor_value_info("theta", onnx.TensorProto.FLOAT, ["N", 2, 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3, 8, 8])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("AffineGrid", ["theta", "s"], ["grid"]),
             helper.make_node("GridSample", ["x", "grid"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "g", [x, theta], [y]),
                             opset_imports=[helper.make_opsetid("", 20)])


def test_a_graph_outputs_declared_dims_are_not_believed():
    model = _stale_output_declaration()
    result = fuse_alone(model)
    assert op_counts(result.model) == {"Shape": 1, "custom.ops::FusedGridSample": 1}
    (fused,) = [n for n in result.model.graph.node if n.domain == "custom.ops"]
    assert "output_size" not in {a.name for a in fused.attribute}  # the size is read from x at run time
    declared = [d.dim_param or d.dim_value for d in result.model.graph.output[0].type.tensor_type.shape.dim]
    assert declared == ["N", 3, "H", "W"]
    rng = np.random.default_rng(0)
    for shape in ((1, 3, 5, 7), (0, 3, 6, 4)):
        feeds = {"x": rng.random(shape, dtype=np.float32), "theta": rng.random((shape[0], 2, 3), dtype=np.float32)}
        got, want = _fused_output(result.model, feeds), ort_run(model, feeds)[0]
        assert got.shape == want.shape == shape
        if shape[0]:
            assert_warp_outputs(got, want, feeds)


def test_sizes_baked_into_constants_that_bind_several_sizes_are_refused():
    # the dynamo export reshapes a 16 x 12 base grid: it runs wherever H * W = 192, its grid at
    # 12 x 16 the 16 x 12 one reshaped (no affine grid, where a rewrite would compute one): refused
    # while H, W are dynamic, fused once they are fixed
    name = "affine_dynamo_opset18_2d_auto.onnx"
    model = onnx.load(os.path.join(MODELS, name))
    rng = np.random.default_rng(1)
    feeds = {"x": rng.random((2, 3, 12, 16), dtype=np.float32), "theta": rng.random((2, 2, 3), dtype=np.float32)}
    assert ort_run(model, feeds)[0].shape == (2, 3, 12, 16)  # the hazard: it runs there
    result = fuse_sample(name)
    assert not result.report.rewrites
    reasons = " | ".join(r.reason for r in result.report.refusals)
    assert "s53=12 (x[2]) and s0=16 (x[3]) as well as at the sizes baked into its constants" in reasons, reasons
    fixed = fuse_sample(name, input_shapes={"x": [2, 3, 16, 12], "theta": [2, 2, 3]})
    assert op_counts(fixed.model)["custom.ops::FusedGridSample"] == 1
