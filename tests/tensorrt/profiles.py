"""Nodes and models as the TensorRT profile writes them, and thetas to run them on: shared by the
plugin, GPU and profile tests (and the deploy tests' session errors)."""

import numpy as np
from onnx import TensorProto, helper

from surgeon_ops.tensorrt import profile


def profile_node(op="FusedGridSample", **attrs):
    """A node as the TensorRT profile writes it (lookup keys included)."""
    inputs = ["x", "theta"] if op == "FusedGridSample" else ["theta"]
    return helper.make_node(profile.op_type(op), inputs, ["y"], domain="custom.ops", plugin_version=profile.VERSION,
                            plugin_namespace=profile.NAMESPACE, **attrs)


def thetas(n, k, rng):
    """Rotations, scales and shifts (past the edge too), one per item."""
    out = np.zeros((n, k, k + 1), np.float32)
    for i in range(n):
        a = rng.uniform(-np.pi, np.pi)
        m = rng.uniform(0.5, 2.0) * np.eye(k)
        m[:2, :2] = m[:2, :2] @ np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        out[i, :, :k], out[i, :, k] = m, rng.uniform(-1.2, 1.2, k)
    return out


def grid_read_twice_model():
    """The seed's custom.ops::AffineGrid whose grid is also a graph output: the grid form."""
    nodes = [helper.make_node("AffineGrid", ["theta"], ["grid"], domain="custom.ops", align_corners=0,
                              output_size=[5, 6]),
             helper.make_node("GridSample", ["x", "grid"], ["y"], mode="bilinear", padding_mode="zeros",
                              align_corners=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 7, 8]),
                                           helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 5, 6]),
                               helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 5, 6, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16), helper.make_opsetid("custom.ops", 1)])
