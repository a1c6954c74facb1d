"""One reading of ``Shape``'s ``start``/``end`` (surgeon/graph/node.py: ``shape_range``), held
against onnxruntime at every start and end around every rank up to 4. (ONNX's reference
evaluator does not clamp: ``end=-3`` of a rank-2 input gives it one dim; the spec clamps.)"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from surgeon.graph.node import Node, shape_range
from surgeon.recognise import shape_range as public_shape_range

ENDS = [None, *range(-6, 7)]


@pytest.mark.parametrize("rank", range(5))
def test_shape_range_is_onnx_shape(rank):
    dims = [2, 3, 5, 7][:rank]
    x = np.zeros(dims, np.float32)
    for start in [None, *range(-6, 7)]:
        for end in ENDS:
            attrs = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
            proto = helper.make_node("Shape", ["x"], ["s"], **attrs)
            graph = helper.make_graph([proto], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                                      [helper.make_tensor_value_info("s", TensorProto.INT64, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
            session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            expected = session.run(None, {"x": x})[0].tolist()
            first, last = shape_range(Node(proto, 0), rank)
            assert 0 <= first <= rank and 0 <= last <= rank
            assert dims[first:last] == expected, (start, end)


def test_public_name_is_the_engine_helper():
    assert public_shape_range is shape_range
