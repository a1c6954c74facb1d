"""Small custom.ops models for the op library's tests, built with onnx.helper."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
NP = {F32: np.float32, F16: np.float16}


def _model(node, inputs, output_type, output_rank):
    out = helper.make_tensor_value_info("y", output_type, [f"d{k}" for k in range(output_rank)])
    graph = helper.make_graph([node], "custom_op", inputs, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.ops", 1)])
    model.ir_version = 8
    return model


def _input(name, elem, rank):
    return helper.make_tensor_value_info(name, elem, None)  # any rank: the op checks it, not onnxruntime


def fused(rank=4, x_type=F32, theta_type=None, size_input=False, **attrs):
    """Y = FusedGridSample(x, theta[, size]); attributes as given (None values left out)."""
    theta_type = x_type if theta_type is None else theta_type
    names = ["x", "theta"] + (["size"] if size_input else [])
    node = helper.make_node("FusedGridSample", names, ["y"], domain="custom.ops", name="fgs",
                            **{k: v for k, v in attrs.items() if v is not None})
    inputs = [_input("x", x_type, rank), _input("theta", theta_type, 3)]
    if size_input:
        inputs.append(_input("size", TensorProto.INT64, 1))
    return _model(node, inputs, x_type, rank)


def affine(theta_type=F32, size_input=False, out_rank=4, **attrs):
    """grid = AffineGrid(theta[, size])."""
    names = ["theta"] + (["size"] if size_input else [])
    node = helper.make_node("AffineGrid", names, ["y"], domain="custom.ops", name="ag",
                            **{k: v for k, v in attrs.items() if v is not None})
    inputs = [_input("theta", theta_type, 3)] + ([_input("size", TensorProto.INT64, 1)] if size_input else [])
    return _model(node, inputs, theta_type, out_rank)


def with_empty_size_input(model: onnx.ModelProto) -> onnx.ModelProto:
    """The node given a third input named "" (how a node skips an optional input)."""
    model.graph.node[0].input.append("")
    return model
