"""onnx-graphsurgeon pipelines hand surgeon a gs.Graph and get one back, no file in between."""

import numpy as np
import onnx_graphsurgeon as gs

import surgeon
from surgeon import CustomOp, PluginSet

from ..builders import relu_neg_abs_model
from .toy_patterns import ReluNeg


def neg_relu(inputs, attrs, device="cpu"):
    return [-np.maximum(inputs[0], 0)]


def test_fuse_takes_and_returns_a_graph():
    graph = gs.import_onnx(relu_neg_abs_model())
    before = [(n.op, [t.name for t in n.inputs]) for n in graph.nodes]
    plugins = PluginSet.of([ReluNeg], ops=[CustomOp("custom.test", "NegRelu", kernel=neg_relu)])
    result = surgeon.fuse(graph, plugins=plugins)
    assert isinstance(result.model, gs.Graph)
    assert [(n.domain or "", n.op) for n in result.model.nodes] == [("custom.test", "NegRelu"), ("", "Abs")]
    assert result.model.import_domains and "custom.test" in {o.domain for o in result.model.import_domains}
    assert [(n.op, [t.name for t in n.inputs]) for n in graph.nodes] == before  # the caller's graph is untouched
    # the other entry points take graphs too
    x = {"x": np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 0.5]], np.float32)}
    out = surgeon.run(result.model, x, plugins=plugins)
    np.testing.assert_array_equal(list(out.values())[0], np.abs(-np.maximum(x["x"], 0)))
    assert surgeon.validate(graph, result.model, x, plugins=plugins).passed
    assert len(surgeon.inspect(graph, plugins=plugins).rewrites) == 1
