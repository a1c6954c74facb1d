"""Toy models of a few standard ops (no warps), and chains of a trivial custom op
``test.ops::Scale`` (y = x * factor) for tests about plumbing, not sampling."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .graph import onnx_model, value_info

SCALE_DOMAIN = "test.ops"


def relu_model(opset: int = 17) -> onnx.ModelProto:
    """x (2, 3) -> Relu -> y."""
    return onnx_model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [("x", [2, 3])], [("y", [2, 3])],
                      opset=opset, name="toy")


def single_op_model(op_type: str, opset: int = 20) -> onnx.ModelProto:
    """One standard node: x (2, 3) -> op -> y, or AffineGrid(theta (1, 2, 3), size) -> grid (1, 4, 4, 2)."""
    if op_type == "AffineGrid":
        size = numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "size")
        node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"])
        return onnx_model([node], [("theta", [1, 2, 3])], [("grid", [1, 4, 4, 2])], [size], opset=opset)
    node = helper.make_node(op_type, ["x"], ["y"])
    return onnx_model([node], [("x", [2, 3])], [("y", [2, 3])], opset=opset)


def relu_neg_abs_model(extra_output: bool = False) -> onnx.ModelProto:
    """x -> Relu -> Neg -> Abs -> y, dims (N, 3); optionally the Relu output is also a graph output."""
    outputs = [value_info("y")] + ([value_info("r")] if extra_output else [])
    return onnx_model([
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Neg", ["r"], ["n"], name="neg"),
        helper.make_node("Abs", ["n"], ["y"], name="abs"),
    ], [value_info("x")], outputs, opset=17)


def relu_neg_abs_mul_sigmoid_model() -> onnx.ModelProto:
    """x -> Relu -> Neg -> Abs -> Mul(w) -> Sigmoid -> y, with a 4 MB weight w."""
    w = numpy_helper.from_array(np.ones((1024, 1024), np.float32), "w")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Neg", ["r"], ["n"], name="neg"),
             helper.make_node("Abs", ["n"], ["a"], name="abs"), helper.make_node("Mul", ["a", "w"], ["m"], name="mul"),
             helper.make_node("Sigmoid", ["m"], ["y"], name="sigmoid")]
    return onnx_model(nodes, [("x", [1024, 1024])], [("y", [1024, 1024])], [w], opset=18, name="toy")


def scale_node(x, y, name, factor=2.0):
    """A test.ops::Scale node: y = x * factor."""
    return helper.make_node("Scale", [x], [y], name=name, domain=SCALE_DOMAIN, factor=factor)


def scale_ops_model(nodes, inputs, outputs, inits=()):
    """A model at opset 17 (IR 10) that imports test.ops, for Scale nodes."""
    return onnx_model(nodes, inputs, outputs, inits, opset=17, domains={SCALE_DOMAIN: 1}, ir_version=10)


def relu_scale_chain_model(k=3):
    """x -> Relu -> Scale -> Relu -> Scale ... -> Relu -> y: k custom nodes in a row, k+1 stages."""
    nodes, cur = [], "x"
    for i in range(k):
        nodes.append(helper.make_node("Relu", [cur], [f"r{i}"], name=f"relu{i}"))
        nodes.append(scale_node(f"r{i}", f"s{i}", f"scale{i}", factor=float(i + 2)))
        cur = f"s{i}"
    nodes.append(helper.make_node("Relu", [cur], ["y"], name="relu_last"))
    return scale_ops_model(nodes, [value_info("x", [2, 3])], [value_info("y", [2, 3])])


def relu_scale_fanout_model(k=3):
    """x -> Relu -> k (Neg -> Scale) side by side -> Sum -> y: k custom nodes, 2 stages."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu")]
    for i in range(k):
        nodes.append(helper.make_node("Neg", ["r"], [f"n{i}"], name=f"neg{i}"))
        nodes.append(scale_node(f"n{i}", f"s{i}", f"scale{i}", factor=float(i + 2)))
    nodes.append(helper.make_node("Sum", [f"s{i}" for i in range(k)], ["y"], name="sum"))
    return scale_ops_model(nodes, [value_info("x", [2, 3])], [value_info("y", [2, 3])])
