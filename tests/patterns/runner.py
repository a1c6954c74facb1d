"""Running rewritten models in tests without surgeon.runtime: standard parts in onnxruntime,
custom.ops nodes on torch (F.affine_grid / F.grid_sample: the contract's ground truth), or the
custom nodes expanded back to opset-20 AffineGrid + GridSample where a subgraph holds them."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

from ..shipped_samples import ort_run

CUSTOM = "custom.ops"
_OPSET20_MODES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


def attrs_of(node) -> dict:
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else list(v) if a.type == onnx.AttributeProto.INTS else v
    return out


def _size(theta, channels, size_input, attrs) -> list[int]:
    if size_input is not None:
        return [int(s) for s in np.asarray(size_input).reshape(-1)]
    return [theta.shape[0], channels, *attrs["output_size"]]


def reference(node, inputs: list) -> np.ndarray:
    """One custom node, computed by torch."""
    with warnings.catch_warnings():  # torch warns about size-1 dims with align_corners=True
        warnings.simplefilter("ignore", UserWarning)
        return _reference(node, inputs)


def _reference(node, inputs: list) -> np.ndarray:
    a = attrs_of(node)
    ac = bool(a.get("align_corners", 0))
    theta = torch.from_numpy(np.ascontiguousarray(inputs[1 if node.op_type == "FusedGridSample" else 0]))
    if node.op_type == "AffineGrid":
        size = _size(theta, 1, inputs[1] if len(inputs) > 1 else None, a)
        return F.affine_grid(theta, size, align_corners=ac).numpy()
    x = torch.from_numpy(np.ascontiguousarray(inputs[0]))
    size = _size(theta, x.shape[1], inputs[2] if len(inputs) > 2 else None, a)
    grid = F.affine_grid(theta, size, align_corners=ac)
    return F.grid_sample(x, grid, mode=a.get("mode", "bilinear"), padding_mode=a.get("padding_mode", "zeros"),
                         align_corners=ac).numpy()


def _slice_model(model, targets: list[str], known: dict):
    """The main graph's nodes computing ``targets`` from ``known`` values, as a model."""
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    needed, stack, seen = set(), list(targets), set()
    while stack:
        v = stack.pop()
        if not v or v in seen or v in known:
            continue
        seen.add(v)
        node = producer.get(v)
        if node is None:
            continue
        assert node.domain != CUSTOM, f"custom node {node.name} needed before it ran"
        needed.add(id(node))
        stack.extend(node.input)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                stack.extend(i for n in a.g.node for i in n.input)
    nodes = [n for n in g.node if id(n) in needed]
    read = {i for n in nodes for i in n.input} | set(targets)
    for n in nodes:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                read |= {i for m in a.g.node for i in m.input}
    inputs = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), np.shape(v))
              for k, v in known.items() if k in read]
    inits = [t for t in g.initializer if t.name in read and t.name not in known]
    graph = helper.make_graph(nodes, "slice", inputs, [onnx.ValueInfoProto(name=t) for t in targets], inits)
    sliced = helper.make_model(graph, opset_imports=list(model.opset_import))
    sliced.ir_version = model.ir_version
    return sliced


def run_split(model, feeds: dict) -> list[np.ndarray]:
    """Outputs of a model whose main graph holds custom.ops nodes."""
    values = {k: np.asarray(v) for k, v in feeds.items()}
    for node in model.graph.node:
        if node.domain != CUSTOM:
            continue
        need = [i for i in node.input if i and i not in values]
        if need:
            values.update(zip(need, ort_run(_slice_model(model, need, values), values, need)))
        values[node.output[0]] = reference(node, [values[i] if i else None for i in node.input])
    outs = [o.name for o in model.graph.output]
    need = [o for o in outs if o not in values]
    if need:
        values.update(zip(need, ort_run(_slice_model(model, need, values), values, need)))
    return [values[o] for o in outs]


def expand_custom(model):
    """custom.ops nodes (in every graph) replaced by opset-20 AffineGrid [+ GridSample]; the
    model moves to opset 20. Only valid where ONNX and torch agree (no size-1 dim with
    align_corners=1)."""
    m = copy.deepcopy(model)
    counter = [0]

    def fresh(hint):
        counter[0] += 1
        return f"__expand_{hint}_{counter[0]}"

    def size_value(nodes, inits, theta, x, size_input, attrs):
        if size_input:
            return size_input
        shape_t, shape_x = fresh("shape_t"), fresh("shape_x")
        n_part, c_part, spatial = fresh("n"), fresh("c"), fresh("spatial")
        inits.append(numpy_helper.from_array(np.array(attrs["output_size"], np.int64), spatial))
        nodes += [helper.make_node("Shape", [theta], [shape_t], start=0, end=1)]
        if x:
            nodes.append(helper.make_node("Shape", [x], [shape_x], start=1, end=2))
            c = shape_x
        else:
            inits.append(numpy_helper.from_array(np.array([1], np.int64), c_part))
            c = c_part
        out = fresh("size")
        nodes.append(helper.make_node("Concat", [shape_t, c, spatial], [out], axis=0))
        return out

    def rewrite(graph):
        nodes, inits = [], []
        for n in graph.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    rewrite(a.g)
            if n.op_type == "GridSample" and n.domain in ("", "ai.onnx"):
                for a in n.attribute:
                    if a.name == "mode":
                        a.s = _OPSET20_MODES.get(a.s.decode(), a.s.decode()).encode()
            if n.domain != CUSTOM:
                nodes.append(n)
                continue
            a = attrs_of(n)
            ac = int(a.get("align_corners", 0))
            if n.op_type == "AffineGrid":
                size = size_value(nodes, inits, n.input[0], None, n.input[1] if len(n.input) > 1 else "", a)
                nodes.append(helper.make_node("AffineGrid", [n.input[0], size], [n.output[0]], align_corners=ac))
                continue
            x, theta = n.input[0], n.input[1]
            size = size_value(nodes, inits, theta, x, n.input[2] if len(n.input) > 2 else "", a)
            grid = fresh("grid")
            nodes.append(helper.make_node("AffineGrid", [theta, size], [grid], align_corners=ac))
            nodes.append(helper.make_node("GridSample", [x, grid], [n.output[0]], align_corners=ac,
                                          mode=_OPSET20_MODES[a.get("mode", "bilinear")],
                                          padding_mode=a.get("padding_mode", "zeros")))
        del graph.node[:]
        graph.node.extend(nodes)
        graph.initializer.extend(inits)

    rewrite(m.graph)
    keep = [o for o in m.opset_import if o.domain not in ("", "ai.onnx", CUSTOM)]
    del m.opset_import[:]
    m.opset_import.extend(keep + [helper.make_opsetid("", 20)])
    m.ir_version = max(m.ir_version, 9)
    return m
