"""Each lint rule: a model that trips it (that rule's hazard, naming the node), and a clean
counterpart (no hazard at all)."""

import numpy as np
import pytest

from surgeon.lint import lint

from ..builders import (FLOAT, grid_sample_model, onnx_model, plugin_node_model, plugin_node_with_graph_attr,
                        plugin_node_with_tensor_attr, relu_model, single_op_model, sized_plugin_model, twice_op_model)

CASES = [  # rule, target, tripping model, clean counterpart
    ("trt-mode-name", "tensorrt", lambda: grid_sample_model("linear", 20), lambda: grid_sample_model("bilinear", 16)),
    ("trt-mode-name", "tensorrt", lambda: grid_sample_model("cubic", 20), lambda: grid_sample_model("bicubic", 16)),
    ("trt-grid-sample-5d", "tensorrt", lambda: grid_sample_model("nearest", 16, rank=5),
     lambda: grid_sample_model("nearest", 16)),
    ("trt-unsupported-op", "tensorrt", lambda: single_op_model("AffineGrid"), lambda: single_op_model("Relu")),
    ("trt-unsupported-op", "tensorrt", lambda: single_op_model("Unique", 16), lambda: single_op_model("Relu")),
    ("trt-shadowed-op-type", "tensorrt", lambda: plugin_node_model("AffineGrid"),
     lambda: plugin_node_model("AffineGridPlugin", plugin_namespace="surgeon")),
    ("trt-shadowed-op-type", "tensorrt", lambda: plugin_node_model("Relu"), lambda: plugin_node_model("TwiceRelu")),
    ("trt-plugin-size-input", "tensorrt", lambda: sized_plugin_model("shape"), lambda: sized_plugin_model("attribute")),
    ("trt-plugin-size-input", "tensorrt", lambda: sized_plugin_model("constant"), lambda: sized_plugin_model("attribute")),
    ("trt-plugin-size-input", "tensorrt", lambda: sized_plugin_model("input"), lambda: sized_plugin_model("attribute")),
    # plain `fuse` output: no lookup keys, while surgeon's plugins register under "surgeon"
    ("trt-plugin-lookup", "tensorrt", lambda: plugin_node_model("FusedGridSample", plugin_namespace=None),
     lambda: plugin_node_model("FusedGridSample", plugin_namespace="surgeon")),
    ("trt-plugin-lookup", "tensorrt", lambda: plugin_node_model("AffineGridPlugin", plugin_version="2", plugin_namespace="surgeon"),
     lambda: plugin_node_model("AffineGridPlugin", plugin_version="1", plugin_namespace="surgeon")),
    ("trt-tensor-attr", "tensorrt", lambda: plugin_node_with_tensor_attr(np.int64), lambda: plugin_node_with_tensor_attr(np.int32)),
    ("trt-attr-type", "tensorrt", plugin_node_with_graph_attr, lambda: plugin_node_model(sizes=[1, 2])),
    ("trt-attr-int32", "tensorrt", lambda: plugin_node_model(stride=2 ** 40), lambda: plugin_node_model(stride=7)),
    ("trt-attr-int32", "tensorrt", lambda: plugin_node_model(sizes=[1, -(2 ** 33)]), lambda: plugin_node_model(sizes=[1, -3])),
    ("trt-plugin-key", "tensorrt", lambda: plugin_node_model(plugin_version=2), lambda: plugin_node_model(plugin_version="2")),
    ("trt-plugin-namespace", "tensorrt", lambda: plugin_node_model(plugin_namespace="custom.ops"),
     lambda: plugin_node_model(plugin_namespace="surgeon")),
    ("ort-cannot-run", "onnxruntime", lambda: grid_sample_model("bilinear", 20), lambda: grid_sample_model("linear", 20)),
    ("ort-cannot-run", "onnxruntime", lambda: grid_sample_model("linear", 16), lambda: grid_sample_model("bilinear", 16)),
    ("ort-cannot-run", "onnxruntime", lambda: grid_sample_model("cubic", 20, rank=5),  # refused on run only
     lambda: grid_sample_model("linear", 20, rank=5)),
    ("ort-custom-op", "onnxruntime", twice_op_model, lambda: twice_op_model(with_function=True)),
    ("ort-opset", "onnxruntime", lambda: relu_model(99), lambda: relu_model(17)),
]


@pytest.mark.parametrize("rule, target, trip, clean", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_trips_and_its_counterpart_is_clean(rule, target, trip, clean):
    tripped = lint(trip(), target)
    assert [h.rule for h in tripped.hazards] == [rule], tripped.lines()
    hazard = tripped.hazards[0]
    assert hazard.what and hazard.fix and hazard.node in tripped.lines()[0]
    assert lint(clean(), target).clean, lint(clean(), target).lines()


def test_mode_name_line_says_what_tensorrt_does():
    line = lint(grid_sample_model("linear", 20), "tensorrt").lines()[0]
    assert "as nearest, silently" in line and "NVIDIA/TensorRT#4646" in line and "--target tensorrt" in line


def test_onnxruntime_names_the_mode_this_opset_uses():
    hazard = lint(grid_sample_model("bilinear", 20), "onnxruntime").hazards[0]
    assert "name the mode 'linear'" in hazard.fix and "not supported" in hazard.what


def test_surgeon_custom_ops_point_at_the_op_library():
    from onnx import helper

    model = sized_plugin_model("attribute")
    hazard = lint(model, "onnxruntime").hazards[0]
    assert hazard.rule == "ort-custom-op" and "surgeon ort-lib" in hazard.fix and "--functions" in hazard.fix
    other = lint(twice_op_model(), "onnxruntime").hazards[0]
    assert "surgeon ort-lib" not in other.fix and "--ort-library PATH" in other.fix
    assert helper  # the model builders stay plain onnx.helper


def test_surgeons_op_library_clears_its_custom_ops():
    assert lint(sized_plugin_model("attribute"), "onnxruntime", ort_libraries=["surgeon"]).clean


def test_subgraph_nodes_are_linted_with_their_body():
    from onnx import TensorProto, helper

    inner = grid_sample_model("linear", 20).graph
    branch = helper.make_graph(list(inner.node), "then", [], list(inner.output))
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    model = onnx_model([node], [("c", TensorProto.BOOL, []), ("x", FLOAT, [1, 1, 4, 4]), ("grid", FLOAT, [1, 3, 3, 2])],
                    [("y", FLOAT, [1, 1, 3, 3])], opset=20)
    hazards = lint(model, "tensorrt").hazards
    assert [h.rule for h in hazards] == ["trt-mode-name", "trt-mode-name"]
    assert all(h.graph.startswith("main/") for h in hazards)
