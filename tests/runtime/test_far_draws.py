"""validate's second round, far past the near draws (issue 27): rewrites that agree with the
original wherever the matchers' probes look and differ past it (a clamp at 20, ``min(W, 64)``,
a gate on an integer at 0, a map over an element the original never reads) fail it, and correct
rewrites pass it."""

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import surgeon
from surgeon_patterns import AffineGridSample

from ..patterns import traps_proof as T

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "models"


def fused(model):
    result = surgeon.fuse(model, plugins=[AffineGridSample()])
    assert result.report.rewrites, result.report.summary()
    return result.model


@pytest.mark.parametrize("trap", ["clamp", "width", "gate"])
def test_a_rewrite_that_differs_only_far_away_fails_the_far_round(trap):
    build = {"clamp": lambda t: T.grid_op("Clip", t, padding="reflection"), "width": lambda t: T.size_branch("width", t),
             "gate": lambda t: T.int_gate("greater", True) if t else T.grid_op("Clip", False)}[trap]
    original, wrong = build(True), fused(build(False))  # the trap's twin's rewrite, taken for the trap's
    if trap == "gate":  # the twin has no k: the rewrite keeps the input, unread
        wrong.graph.input.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    report = surgeon.validate(original, wrong)
    assert report.far is not None and not report.far.passed and not report.passed, report.summary()
    assert any(line.startswith("far draws:") for line in report.failures()), report.failures()
    near = surgeon.validate(original, wrong, far=False)
    assert near.passed, near.summary()  # the near draws alone do not see it


def test_a_map_over_an_element_the_original_never_reads_fails_the_far_round():
    # The original reads M's first two rows; a rewrite reading all nine elements through a map
    # (zero weights on the last row) is NaN where the far draw puts NaN in that row.
    original = T.unread_elements("row")
    g = helper.make_graph(
        [helper.make_node("Reshape", ["M", "flat"], ["m9"]), helper.make_node("MatMul", ["m9", "w"], ["t6"]),
         helper.make_node("Reshape", ["t6", "mat"], ["theta"]),
         helper.make_node("FusedGridSample", ["x", "theta"], ["y"], domain="custom.ops", align_corners=0,
                          mode="bilinear", padding_mode="zeros", output_size=[16, 12])],
        "wrong", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 12]),
                  helper.make_tensor_value_info("M", TensorProto.FLOAT, ["N", 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, 16, 12])],
        [numpy_helper.from_array(np.array([-1, 9], np.int64), "flat"),
         numpy_helper.from_array(np.array([-1, 2, 3], np.int64), "mat"),
         numpy_helper.from_array(np.vstack([np.diag([0.5, 0.5, 0.25, 0.5, 0.5, 0.25]), np.zeros((3, 6))])
                                 .astype(np.float32), "w")])
    wrong = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("custom.ops", 1)])
    wrong.ir_version = 9
    report = surgeon.validate(original, wrong)
    assert report.far is not None and not report.far.passed, report.summary()
    assert surgeon.validate(original, fused(original)).passed  # the rewrite surgeon writes reads six


@pytest.mark.parametrize("name", ["stn_ts_opset20_2d.onnx", "affine_ts_opset20_2d_dynamic.onnx",
                                  "affine_dynamo_opset18_3d.onnx", "monai_resample_ts_opset17.onnx"])
def test_correct_rewrites_pass_both_rounds(name):
    model = str(SAMPLES / name)
    report = surgeon.validate(model, surgeon.fuse(model).model)
    assert report.passed and report.far is not None and report.far.passed, report.summary()
    if name == "affine_ts_opset20_2d_dynamic.onnx":  # x [N, 3, H, W]: the far round at 2 x 67 x 67
        [shape] = [i["shape"] for i in report.far.inputs if i["name"] == "x"]
        assert shape == [2, 3, 67, 67], shape
