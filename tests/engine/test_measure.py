"""Shapes read off two runs (surgeon/graph/measure.py), within what a probe may feed."""

from onnx import TensorProto, helper

from surgeon.graph.extract import MAX_VALUE
from surgeon.graph.measure import measured_dims


def _volume_model(channels: int):
    """y = ReduceMean(x) over C, D, H, W of a 5-D x whose N, D, H, W are dynamic: y is [N]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", channels, "D", "H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    axes = helper.make_tensor("axes", TensorProto.INT64, [4], [1, 2, 3, 4])
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)
    graph = helper.make_graph([node], "volume", [x], [y], [axes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def test_a_large_volume_is_measured_at_smaller_sizes():
    # at the usual sizes (48-54 per dim) 8 channels of a volume hold 54M elements, past MAX_VALUE
    assert 48 * 8 * 50 * 52 * 54 > MAX_VALUE
    assert measured_dims(_volume_model(8), ["y"]) == {"y": ("N",)}


def test_a_small_volume_keeps_the_usual_sizes():
    assert measured_dims(_volume_model(1), ["y"]) == {"y": ("N",)}
