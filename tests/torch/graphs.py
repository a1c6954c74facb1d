"""Comparing two ONNX graphs node by node, independent of value names: each graph output is
expanded into the tree of nodes that computes it (op, domain, typed attributes, inputs; constants
by value, graph inputs by name), every custom.ops node's output carries its declared type, and
both graphs must hold the same nodes (Constant nodes and initializers both count as constants)."""

from __future__ import annotations

import collections

import numpy as np
import onnx
from onnx import helper, numpy_helper

CUSTOM = "custom.ops"


def _attr(a):
    value = helper.get_attribute_value(a)
    if isinstance(value, onnx.TensorProto):
        value = _tensor(value)
    elif isinstance(value, list):
        value = tuple(value)
    return a.name, a.type, value


def _tensor(t):
    arr = numpy_helper.to_array(t)
    return ("const", str(arr.dtype), arr.shape, tuple(np.asarray(arr).reshape(-1).tolist()))


def declared_types(model: onnx.ModelProto) -> dict:
    g = model.graph
    out = {}
    for v in [*g.input, *g.value_info, *g.output]:
        t = v.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)
        out[v.name] = (t.elem_type, dims if t.HasField("shape") else None)
    return out


def signature(model: onnx.ModelProto):
    """(the trees of the graph outputs, the multiset of nodes, custom-domain opsets)."""
    g = model.graph
    consts = {t.name: _tensor(t) for t in g.initializer}
    producer = {}
    for node in g.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            consts[node.output[0]] = _attr(node.attribute[0])[2]
        else:
            for i, name in enumerate(node.output):
                producer[name] = (node, i)
    types = declared_types(model)
    inputs = {v.name for v in g.input}
    memo: dict = {}

    def tree(name):
        if name in memo:
            return memo[name]
        if name == "":
            r = ("absent",)
        elif name in consts:
            r = consts[name]
        elif name in inputs:
            r = ("input", name)
        else:
            node, i = producer[name]
            typed = types.get(name) if node.domain == CUSTOM else None
            r = (node.domain or "", node.op_type, tuple(sorted(_attr(a) for a in node.attribute)),
                 tuple(tree(x) for x in node.input), i, typed)
        memo[name] = r
        return r

    outputs = tuple((o.name, types.get(o.name), tree(o.name)) for o in g.output)
    nodes = collections.Counter((n.domain or "", n.op_type) for n in g.node if n.op_type != "Constant")
    opsets = {o.domain: o.version for o in model.opset_import if o.domain not in ("", "ai.onnx")}
    return outputs, nodes, opsets


def custom_nodes(model: onnx.ModelProto) -> list:
    return [n for n in model.graph.node if n.domain == CUSTOM]
