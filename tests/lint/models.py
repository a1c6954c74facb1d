"""Small models, one pair per lint rule: one that trips the rule, and a clean counterpart."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(nodes, inputs, outputs, opset=16, inits=(), custom=True, functions=()):
    graph = helper.make_graph(nodes, "lint", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs], list(inits))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("custom.ops", 1)] if custom else [])
    return helper.make_model(graph, opset_imports=opsets, functions=list(functions))


def grid_sample(mode="bilinear", opset=16, rank=4):
    x, g = ([1, 1, 4, 4], [1, 3, 3, 2]) if rank == 4 else ([1, 1, 2, 4, 4], [1, 2, 3, 3, 3])
    out = [1, 1, *g[1:-1]]
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode)
    return model([node], [("x", F, x), ("grid", F, g)], [("y", F, out)], opset=opset, custom=False)


def standard(op_type, opset=20):
    if op_type == "AffineGrid":
        size = numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "size")
        node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"])
        return model([node], [("theta", F, [1, 2, 3])], [("grid", F, [1, 4, 4, 2])], opset, [size], custom=False)
    node = helper.make_node(op_type, ["x"], ["y"])
    return model([node], [("x", F, [2, 3])], [("y", F, [2, 3])], opset, custom=False)


def plugin(op_type="MyPlugin", **attrs):
    """A custom node TensorRT hands to a plugin, with the given attributes."""
    attrs.setdefault("plugin_namespace", "mine")
    attrs = {k: v for k, v in attrs.items() if v is not None}  # None: the attribute left out
    node = helper.make_node(op_type, ["x"], ["y"], domain="custom.ops", **attrs)
    return model([node], [("x", F, [2, 3])], [("y", F, [2, 3])])


def tensor_attr(dtype):
    return plugin(table=numpy_helper.from_array(np.arange(3, dtype=dtype), "table"))


def graph_attr():
    body = helper.make_graph([], "body", [], [])
    return plugin(body=body)


def sized_plugin(size_from="shape"):
    """A plugin node reading its output size from an int64 input: computed from Shape, a
    constant, a graph input, or (clean) from an INTS attribute."""
    nodes, inits, extra = [], [], []
    if size_from == "shape":
        nodes.append(helper.make_node("Shape", ["x"], ["size"]))
    elif size_from == "constant":
        inits.append(numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "size"))
    elif size_from == "input":
        extra.append(("size", I64, [4]))
    inputs = ["x", "theta"] + (["size"] if size_from != "attribute" else [])
    attrs = {"output_size": [4, 4]} if size_from == "attribute" else {}
    nodes.append(helper.make_node("FusedGridSample", inputs, ["y"], domain="custom.ops", plugin_namespace="surgeon",
                                  **attrs))
    return model(nodes, [("x", F, [1, 1, 4, 4]), ("theta", F, [1, 2, 3]), *extra], [("y", F, [1, 1, 4, 4])],
                 inits=inits)


def custom_op(with_function=False):
    node = helper.make_node("Twice", ["x"], ["y"], domain="custom.ops")
    functions = []
    if with_function:
        body = [helper.make_node("Add", ["a", "a"], ["b"])]
        functions.append(helper.make_function("custom.ops", "Twice", ["a"], ["b"], body,
                                               [helper.make_opsetid("", 16)]))
    return model([node], [("x", F, [2, 3])], [("y", F, [2, 3])], functions=functions)


def opset(version):
    node = helper.make_node("Relu", ["x"], ["y"])
    return model([node], [("x", F, [2, 3])], [("y", F, [2, 3])], opset=version, custom=False)
