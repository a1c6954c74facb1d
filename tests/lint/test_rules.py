"""Each lint rule: a model that trips it (that rule's hazard, naming the node), and a clean
counterpart (no hazard at all)."""

import numpy as np
import pytest

from surgeon.lint import lint

from . import models as m

CASES = [  # rule, target, tripping model, clean counterpart
    ("trt-mode-name", "tensorrt", lambda: m.grid_sample("linear", 20), lambda: m.grid_sample("bilinear", 16)),
    ("trt-mode-name", "tensorrt", lambda: m.grid_sample("cubic", 20), lambda: m.grid_sample("bicubic", 16)),
    ("trt-grid-sample-5d", "tensorrt", lambda: m.grid_sample("nearest", 16, rank=5),
     lambda: m.grid_sample("nearest", 16)),
    ("trt-unsupported-op", "tensorrt", lambda: m.standard("AffineGrid"), lambda: m.standard("Relu")),
    ("trt-unsupported-op", "tensorrt", lambda: m.standard("Unique", 16), lambda: m.standard("Relu")),
    ("trt-shadowed-op-type", "tensorrt", lambda: m.plugin("AffineGrid"),
     lambda: m.plugin("AffineGridPlugin", plugin_namespace="surgeon")),
    ("trt-shadowed-op-type", "tensorrt", lambda: m.plugin("Relu"), lambda: m.plugin("TwiceRelu")),
    ("trt-plugin-size-input", "tensorrt", lambda: m.sized_plugin("shape"), lambda: m.sized_plugin("attribute")),
    ("trt-plugin-size-input", "tensorrt", lambda: m.sized_plugin("constant"), lambda: m.sized_plugin("attribute")),
    ("trt-plugin-size-input", "tensorrt", lambda: m.sized_plugin("input"), lambda: m.sized_plugin("attribute")),
    # plain `fuse` output: no lookup keys, while surgeon's plugins register under "surgeon"
    ("trt-plugin-lookup", "tensorrt", lambda: m.plugin("FusedGridSample", plugin_namespace=None),
     lambda: m.plugin("FusedGridSample", plugin_namespace="surgeon")),
    ("trt-plugin-lookup", "tensorrt", lambda: m.plugin("AffineGridPlugin", plugin_version="2", plugin_namespace="surgeon"),
     lambda: m.plugin("AffineGridPlugin", plugin_version="1", plugin_namespace="surgeon")),
    ("trt-tensor-attr", "tensorrt", lambda: m.tensor_attr(np.int64), lambda: m.tensor_attr(np.int32)),
    ("trt-attr-type", "tensorrt", m.graph_attr, lambda: m.plugin(sizes=[1, 2])),
    ("trt-attr-int32", "tensorrt", lambda: m.plugin(stride=2 ** 40), lambda: m.plugin(stride=7)),
    ("trt-attr-int32", "tensorrt", lambda: m.plugin(sizes=[1, -(2 ** 33)]), lambda: m.plugin(sizes=[1, -3])),
    ("trt-plugin-key", "tensorrt", lambda: m.plugin(plugin_version=2), lambda: m.plugin(plugin_version="2")),
    ("trt-plugin-namespace", "tensorrt", lambda: m.plugin(plugin_namespace="custom.ops"),
     lambda: m.plugin(plugin_namespace="surgeon")),
    ("ort-cannot-run", "onnxruntime", lambda: m.grid_sample("bilinear", 20), lambda: m.grid_sample("linear", 20)),
    ("ort-cannot-run", "onnxruntime", lambda: m.grid_sample("linear", 16), lambda: m.grid_sample("bilinear", 16)),
    ("ort-cannot-run", "onnxruntime", lambda: m.grid_sample("cubic", 20, rank=5),  # refused on run only
     lambda: m.grid_sample("linear", 20, rank=5)),
    ("ort-custom-op", "onnxruntime", m.custom_op, lambda: m.custom_op(with_function=True)),
    ("ort-opset", "onnxruntime", lambda: m.opset(99), lambda: m.opset(17)),
]


@pytest.mark.parametrize("rule, target, trip, clean", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_trips_and_its_counterpart_is_clean(rule, target, trip, clean):
    tripped = lint(trip(), target)
    assert [h.rule for h in tripped.hazards] == [rule], tripped.lines()
    hazard = tripped.hazards[0]
    assert hazard.what and hazard.fix and hazard.node in tripped.lines()[0]
    assert lint(clean(), target).clean, lint(clean(), target).lines()


def test_mode_name_line_says_what_tensorrt_does():
    line = lint(m.grid_sample("linear", 20), "tensorrt").lines()[0]
    assert "as nearest, silently" in line and "NVIDIA/TensorRT#4646" in line and "--target tensorrt" in line


def test_onnxruntime_names_the_mode_this_opset_uses():
    hazard = lint(m.grid_sample("bilinear", 20), "onnxruntime").hazards[0]
    assert "name the mode 'linear'" in hazard.fix and "not supported" in hazard.what


def test_surgeon_custom_ops_point_at_the_op_library():
    from onnx import helper

    model = m.sized_plugin("attribute")
    hazard = lint(model, "onnxruntime").hazards[0]
    assert hazard.rule == "ort-custom-op" and "surgeon ort-lib" in hazard.fix and "--functions" in hazard.fix
    other = lint(m.custom_op(), "onnxruntime").hazards[0]
    assert "surgeon ort-lib" not in other.fix and "--ort-library PATH" in other.fix
    assert helper  # the model builders stay plain onnx.helper


def test_surgeons_op_library_clears_its_custom_ops():
    assert lint(m.sized_plugin("attribute"), "onnxruntime", ort_libraries=["surgeon"]).clean


def test_subgraph_nodes_are_linted_with_their_body():
    from onnx import TensorProto, helper

    inner = m.grid_sample("linear", 20).graph
    branch = helper.make_graph(list(inner.node), "then", [], list(inner.output))
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    model = m.model([node], [("c", TensorProto.BOOL, []), ("x", m.F, [1, 1, 4, 4]), ("grid", m.F, [1, 3, 3, 2])],
                    [("y", m.F, [1, 1, 3, 3])], opset=20, custom=False)
    hazards = lint(model, "tensorrt").hazards
    assert [h.rule for h in hazards] == ["trt-mode-name", "trt-mode-name"]
    assert all(h.graph.startswith("main/") for h in hazards)
