"""Models of one custom.ops node (FusedGridSample, AffineGrid, a TensorRT plugin node, a custom
op with or without a function body), each with every input a graph input, and their feeds."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .graph import CUSTOM_OPS, FLOAT, INT64, onnx_model, value_info

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
NP = {F32: np.float32, F16: np.float16}


def _one_node_model(node, inputs, output_type, output_rank):
    out = value_info("y", [f"d{k}" for k in range(output_rank)], output_type)
    return onnx_model([node], inputs, [out], opset=17, domains=CUSTOM_OPS, ir_version=8, name="custom_op")


def _any_rank(name, elem):
    return value_info(name, None, elem)  # any rank: the op checks it, not onnxruntime


def fused_grid_sample_model(rank=4, x_type=F32, theta_type=None, size_input=False, **attrs):
    """y = FusedGridSample(x, theta[, size]) of any input rank; attributes as given (None values left out)."""
    theta_type = x_type if theta_type is None else theta_type
    names = ["x", "theta"] + (["size"] if size_input else [])
    node = helper.make_node("FusedGridSample", names, ["y"], domain="custom.ops", name="fgs",
                            **{k: v for k, v in attrs.items() if v is not None})
    inputs = [_any_rank("x", x_type), _any_rank("theta", theta_type)]
    if size_input:
        inputs.append(_any_rank("size", INT64))
    return _one_node_model(node, inputs, x_type, rank)


def fused_grid_sample_case_model(nsp, mode, padding, ac, size_input, out, x_type=F32):
    """fused_grid_sample_model for ``nsp`` spatial dims, the size an input or ``out`` as output_size."""
    attrs = dict(mode=mode, padding_mode=padding, align_corners=ac)
    if not size_input:
        attrs["output_size"] = list(out)
    return fused_grid_sample_model(rank=nsp + 2, x_type=x_type, size_input=size_input, **attrs)


def affine_grid_model(theta_type=F32, size_input=False, out_rank=4, **attrs):
    """y = custom.ops::AffineGrid(theta[, size]); attributes as given (None values left out)."""
    names = ["theta"] + (["size"] if size_input else [])
    node = helper.make_node("AffineGrid", names, ["y"], domain="custom.ops", name="ag",
                            **{k: v for k, v in attrs.items() if v is not None})
    inputs = [_any_rank("theta", theta_type)] + ([_any_rank("size", INT64)] if size_input else [])
    return _one_node_model(node, inputs, theta_type, out_rank)


def with_empty_size_input(model: onnx.ModelProto) -> onnx.ModelProto:
    """The node given a third input named "" (how a node skips an optional input)."""
    model.graph.node[0].input.append("")
    return model


def custom_op_model(op: str, *, x_shape, theta_shape, output_size=None, dynamic=False, align=0,
                    mode="bilinear", padding="zeros", opset=20, elem=FLOAT, attrs=None):
    """A model holding one ``custom.ops`` node with symbolic batch and spatial dims. ``dynamic``:
    the size comes in as an input (int64 ``size``), otherwise ``output_size`` is an attribute."""
    k = theta_shape[1]
    inputs = [value_info("theta", ["N", k, k + 1], elem)]
    node_inputs = ["theta"]
    if op == "FusedGridSample":
        inputs.insert(0, value_info("x", ["N", x_shape[1]] + [f"s{i}" for i in range(k)], elem))
        node_inputs.insert(0, "x")
    if attrs is None:
        attrs = {"align_corners": align}
        if op == "FusedGridSample":
            attrs.update(mode=mode, padding_mode=padding)
        if not dynamic:
            attrs["output_size"] = list(output_size)
    if dynamic:
        inputs.append(value_info("size", [k + 2], INT64))
        node_inputs.append("size")
    node = helper.make_node(op, node_inputs, ["y"], name="custom", domain="custom.ops", **attrs)
    spatial = list(output_size) if output_size is not None and not dynamic else [f"o{i}" for i in range(k)]
    dims = ["N", x_shape[1], *spatial] if op == "FusedGridSample" else ["N", *spatial, k]
    return onnx_model([node], inputs, [value_info("y", dims, elem)], opset=opset, domains=CUSTOM_OPS,
                      ir_version=9 if opset >= 20 else 8, name="custom")


def custom_op_feeds(op: str, *, x_shape, theta_shape, size, dynamic, seed=0, dtype=np.float32) -> dict:
    """custom_op_model's inputs: theta near the identity, an image for FusedGridSample, the size."""
    rng = np.random.default_rng(seed)
    k = theta_shape[1]
    theta = np.eye(k, k + 1) + 0.4 * rng.standard_normal(theta_shape)
    feeds = {"theta": theta.astype(dtype)}
    if op == "FusedGridSample":
        feeds["x"] = rng.random(x_shape).astype(dtype)
    if dynamic:
        feeds["size"] = np.array(size, np.int64)
    return feeds


def plugin_node_model(op_type="MyPlugin", **attrs):
    """x (2, 3) -> one custom node TensorRT hands to a plugin, with the given attributes (None: left out)."""
    attrs.setdefault("plugin_namespace", "mine")
    attrs = {k: v for k, v in attrs.items() if v is not None}
    node = helper.make_node(op_type, ["x"], ["y"], domain="custom.ops", **attrs)
    return onnx_model([node], [("x", [2, 3])], [("y", [2, 3])], opset=16, domains=CUSTOM_OPS)


def plugin_node_with_tensor_attr(dtype):
    """plugin_node_model with a TENSOR attribute of ``dtype``."""
    return plugin_node_model(table=numpy_helper.from_array(np.arange(3, dtype=dtype), "table"))


def plugin_node_with_graph_attr():
    """plugin_node_model with a GRAPH attribute."""
    return plugin_node_model(body=helper.make_graph([], "body", [], []))


def sized_plugin_model(size_from="shape"):
    """A FusedGridSample plugin node reading its output size from an int64 input: computed from
    Shape, a constant, a graph input, or (clean) from an INTS attribute."""
    nodes, inits, extra = [], [], []
    if size_from == "shape":
        nodes.append(helper.make_node("Shape", ["x"], ["size"]))
    elif size_from == "constant":
        inits.append(numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "size"))
    elif size_from == "input":
        extra.append(("size", INT64, [4]))
    inputs = ["x", "theta"] + (["size"] if size_from != "attribute" else [])
    attrs = {"output_size": [4, 4]} if size_from == "attribute" else {}
    nodes.append(helper.make_node("FusedGridSample", inputs, ["y"], domain="custom.ops", plugin_namespace="surgeon",
                                  **attrs))
    return onnx_model(nodes, [("x", [1, 1, 4, 4]), ("theta", [1, 2, 3]), *extra], [("y", [1, 1, 4, 4])], inits,
                      opset=16, domains=CUSTOM_OPS)


def twice_op_model(with_function=False):
    """x -> custom.ops::Twice -> y, optionally with a function body (Add(a, a))."""
    node = helper.make_node("Twice", ["x"], ["y"], domain="custom.ops")
    functions = []
    if with_function:
        body = [helper.make_node("Add", ["a", "a"], ["b"])]
        functions.append(helper.make_function("custom.ops", "Twice", ["a"], ["b"], body,
                                               [helper.make_opsetid("", 16)]))
    return onnx_model([node], [("x", [2, 3])], [("y", [2, 3])], opset=16, domains=CUSTOM_OPS, functions=functions)
