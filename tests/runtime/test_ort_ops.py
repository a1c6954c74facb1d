"""Issue 41, item 3: which standard and contrib ops onnxruntime can run, as ``fuse`` tells at once
(surgeon/runtime/ortops.py), checked against onnxruntime itself."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import StringStringEntryProto, TensorProto, helper

import surgeon
from surgeon.runtime.ortops import unrunnable_written, why_not


def _session_fails(op, domain, opset, inputs=1) -> bool:
    """Whether onnxruntime refuses a one-node model of the op (float inputs of shape [2, 4])."""
    names = [f"i{k}" for k in range(inputs)]
    graph = helper.make_graph([helper.make_node(op, names, ["y"], domain=domain)], "one",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 4]) for n in names],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        session.run(None, {n: np.ones([2, 4], np.float32) for n in names})
    except Exception:
        return True
    return False


@pytest.mark.parametrize("op, domain, opset, inputs, reason", [
    ("SimplifiedLayerNormalization", "com.microsoft", 18, 2, "it has SimplifiedLayerNormalization in the default"),
    ("RMSNormalization", "", 18, 2, "RMSNormalization needs opset 23 of the default domain; the model imports 18"),
    ("HardSwish", "", 13, 1, "HardSwish needs opset 14"),
    ("RMSNormalization", "", 23, 2, None),
    ("HardSwish", "", 14, 1, None),  # no kernel: onnxruntime inlines its function body
    ("Gelu", "com.microsoft", 18, 1, None),
])
def test_the_answer_is_onnxruntime_s_own(op, domain, opset, inputs, reason):
    found = why_not(domain, op, opset)
    assert (found is None) == (reason is None) and (reason is None or reason in found), found
    assert _session_fails(op, domain, opset, inputs) == (reason is not None)


def test_only_what_a_pattern_wrote_is_named():
    def node(op, domain, pattern=None):
        n = helper.make_node(op, ["x"], [f"{op}_out"], domain=domain)
        if pattern:
            n.metadata_props.append(StringStringEntryProto(key="surgeon.pattern", value=pattern))
        return n

    graph = helper.make_graph([node("SimplifiedLayerNormalization", "com.microsoft", "sln"),
                               node("FusedMatMul", "com.microsoft.nope"), node("RMSNormalization", "")], "g", [], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    [line] = unrunnable_written(model, surgeon.PluginSet.of([]))
    assert line.startswith("pattern 'sln' writes com.microsoft::SimplifiedLayerNormalization, which onnxruntime "
                           "cannot run: onnxruntime has no com.microsoft::SimplifiedLayerNormalization")
