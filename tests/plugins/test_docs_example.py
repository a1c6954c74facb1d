"""The worked example in docs/plugins.md runs as printed: a guide that rots is worse than none."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from onnx import helper, numpy_helper

import surgeon

from ..builders import onnx_model
from .running import import_doc_example, run_with_kernels


@pytest.fixture
def swish_module(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield import_doc_example("plugins.md", "surgeon_swish", tmp_path)
    sys.modules.pop("surgeon_swish", None)  # the next test's copy comes from its own tmp_path


def _model(beta, order=("x", "s")):
    b = numpy_helper.from_array(np.asarray(beta, np.float32), "beta")
    nodes = [helper.make_node("Mul", ["beta", "x"], ["bx"]), helper.make_node("Sigmoid", ["bx"], ["s"]),
             helper.make_node("Mul", list(order), ["y"])]
    return onnx_model(nodes, [("x", [2, 8])], [("y", [2, 8])], [b], opset=18)


@pytest.mark.parametrize("order", [("x", "s"), ("s", "x")])
def test_the_guides_plugin_fuses_and_its_kernel_agrees(swish_module, order):
    result = surgeon.fuse(_model(1.702, order), plugins=surgeon.PluginSet.installed(["surgeon_swish:Swish"], only=["swish"]))
    [node] = result.model.graph.node
    assert (node.domain, node.op_type, list(node.input), list(node.output)) == ("example.ops", "Swish", ["x"], ["y"])
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["beta"] == pytest.approx(1.702) and attrs["exact"] == 1 and attrs["impl"] == b"reference"
    assert ("example.ops", 1) in [(o.domain, o.version) for o in result.model.opset_import]
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    [got] = run_with_kernels(result.model, {"x": x}, swish_module.Swish())
    np.testing.assert_allclose(got, x / (1 + np.exp(-1.702 * x)), atol=1e-6)


def test_the_guides_check_refuses_a_vector_beta(swish_module):
    result = surgeon.fuse(_model(np.full((8,), 2.0)), plugins=surgeon.PluginSet.installed(["surgeon_swish:Swish"], only=["swish"]))
    assert result.report.rewrites == []
    assert "beta has shape [8]" in result.report.refusals[0].reason
