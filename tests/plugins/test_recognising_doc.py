"""docs/recognising.md's example runs as printed: the Recogniser finds every GELU by what it
computes, tells the erf form from the tanh form, and leaves what is neither."""

from __future__ import annotations

import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import surgeon

from .running import import_doc_example


@pytest.fixture
def anygelu(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield import_doc_example("recognising.md", "surgeon_anygelu", tmp_path)
    sys.modules.pop("surgeon_anygelu", None)


def _model(blocks):
    """Each block is a function (name, x) -> (nodes, initializers, output) on one input."""
    nodes, inits, outputs = [], [], []
    for i, block in enumerate(blocks):
        n, t, out = block(f"b{i}", "x")
        nodes += n
        inits += t
        outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 8]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])], outputs,
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def _c(name, value):
    return numpy_helper.from_array(np.asarray(value, np.float32), name)


def erf_half_last(p, x):  # x * 0.5 * (1 + erf(x / sqrt2))
    return ([helper.make_node("Div", [x, f"{p}s2"], [f"{p}d"]), helper.make_node("Erf", [f"{p}d"], [f"{p}e"]),
             helper.make_node("Add", [f"{p}e", f"{p}one"], [f"{p}a"]), helper.make_node("Mul", [x, f"{p}h"], [f"{p}m"]),
             helper.make_node("Mul", [f"{p}m", f"{p}a"], [f"{p}y"])],
            [_c(f"{p}s2", np.sqrt(2)), _c(f"{p}one", 1.0), _c(f"{p}h", 0.5)], f"{p}y")


def erf_half_first(p, x):  # 0.5 * (x * (1 + erf(x * 0.70710678)))
    return ([helper.make_node("Mul", [x, f"{p}r"], [f"{p}d"]), helper.make_node("Erf", [f"{p}d"], [f"{p}e"]),
             helper.make_node("Add", [f"{p}one", f"{p}e"], [f"{p}a"]), helper.make_node("Mul", [x, f"{p}a"], [f"{p}m"]),
             helper.make_node("Mul", [f"{p}h", f"{p}m"], [f"{p}y"])],
            [_c(f"{p}r", 1 / np.sqrt(2)), _c(f"{p}one", 1.0), _c(f"{p}h", 0.5)], f"{p}y")


def tanh_form(p, x):  # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    return ([helper.make_node("Pow", [x, f"{p}three"], [f"{p}c"]), helper.make_node("Mul", [f"{p}c", f"{p}k"], [f"{p}ck"]),
             helper.make_node("Add", [x, f"{p}ck"], [f"{p}in"]), helper.make_node("Mul", [f"{p}in", f"{p}s"], [f"{p}z"]),
             helper.make_node("Tanh", [f"{p}z"], [f"{p}t"]), helper.make_node("Add", [f"{p}t", f"{p}one"], [f"{p}a"]),
             helper.make_node("Mul", [x, f"{p}h"], [f"{p}m"]), helper.make_node("Mul", [f"{p}m", f"{p}a"], [f"{p}y"])],
            [_c(f"{p}three", 3.0), _c(f"{p}k", 0.044715), _c(f"{p}s", np.sqrt(2 / np.pi)), _c(f"{p}one", 1.0),
             _c(f"{p}h", 0.5)], f"{p}y")


def quick_gelu(p, x):  # x * sigmoid(1.702 x): neither
    return ([helper.make_node("Mul", [x, f"{p}k"], [f"{p}kx"]), helper.make_node("Sigmoid", [f"{p}kx"], [f"{p}s"]),
             helper.make_node("Mul", [x, f"{p}s"], [f"{p}y"])], [_c(f"{p}k", 1.702)], f"{p}y")


def test_every_spelling_becomes_the_op_for_what_it_computes(anygelu):
    model = _model([erf_half_last, erf_half_first, tanh_form, quick_gelu])
    result = surgeon.fuse(model, plugins=[anygelu.AnyGelu()])
    ops = sorted(n.op_type for n in result.model.graph.node if n.domain == "com.microsoft")
    assert ops == ["FastGelu", "Gelu", "Gelu"], result.report.summary()
    assert "Sigmoid" in [n.op_type for n in result.model.graph.node]  # x * sigmoid(1.702 x) stays
    x = np.linspace(-5, 5, 16, dtype=np.float32).reshape(2, 8)
    plain = ort.SessionOptions()
    plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model.SerializeToString(), plain, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = ort.InferenceSession(result.model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, atol=2e-5)


def test_identical_blocks_are_probed_once(anygelu):
    model = _model([erf_half_last] * 6)
    recogniser = anygelu.AnyGelu.recognise
    recogniser.verdicts.clear()
    result = surgeon.fuse(model, plugins=[anygelu.AnyGelu()])
    assert [n.op_type for n in result.model.graph.node] == ["Gelu"] * 6
    assert sum(1 for v in recogniser.verdicts.values() if not isinstance(v, surgeon.Refusal)) == 1
