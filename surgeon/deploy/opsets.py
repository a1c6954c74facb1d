"""A model's default-domain opset: reading it and converting it (onnx.version_converter on a
weight-free copy, with the nodes it cannot step down lowered by ``lowering``). Dropping the
imports and functions nothing uses any more is graph/prune.py's."""

from __future__ import annotations

import re

import numpy as np
from onnx import ModelProto, checker, helper, version_converter

from . import lowering
from ..errors import SurgeonError
from ..graph.node import subgraphs_of
from ..graph.walk import walk_nodes
from ..io.load import skeleton_model
from ..rewrite.shapes import ShapeTable

_DEFAULT = ("", "ai.onnx")
SMALL = 64  # initializers up to this many elements go through the converter (axes, shapes)


def default_opset(proto: ModelProto) -> int | None:
    for o in proto.opset_import:
        if o.domain in _DEFAULT:
            return o.version
    return None


def convert(proto: ModelProto, target: int) -> list[str]:
    """Convert ``proto`` in place to default-domain opset ``target``; returns notes. Weights stay
    where they are: only a skeleton (nodes, small constants) goes through the converter, which
    leaves custom-domain nodes as they are. Going down, nodes the converter cannot step down are
    lowered by hand (``lowering``); a node that cannot be written at ``target`` is an error
    naming it."""
    have = default_opset(proto)
    hidden = lowering.hide(proto, have, target)
    try:
        _convert(proto, have, target)
    except SurgeonError:
        lowering.restore(proto, hidden)
        raise
    lowering.restore(proto, hidden)
    _check_nodes(proto, have, target)
    note = hidden.note(have, target)
    return [note] if note else []


def _check_nodes(proto: ModelProto, have: int, target: int) -> None:
    """Every default-domain node as the target's schema wants it: an adapter that writes a node
    the target does not know (an attribute of the newer version kept) is named, not saved."""
    ctx = checker.C.CheckerContext()
    ctx.ir_version = proto.ir_version
    ctx.opset_imports = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in proto.opset_import}
    for node in walk_nodes(proto.graph.node):
        if node.domain not in _DEFAULT or subgraphs_of(node):
            continue
        try:
            checker.check_node(node, ctx)
        except checker.ValidationError as exc:
            name = node.name or f"{node.op_type}->{node.output[0] if node.output else '?'}"
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SurgeonError(f"cannot convert node {name} ({node.op_type}) from opset {have} to {target}: "
                               f"onnx.version_converter wrote it invalid ({why})") from None


def _why(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0].split("Assertion `false` failed: ")[-1] if text else type(exc).__name__


def _convert(proto: ModelProto, have: int, target: int) -> None:
    skeleton = skeleton_model(proto, keep_small=SMALL)
    try:
        converted = version_converter.convert_version(skeleton, target)
    except Exception as exc:
        why = _why(exc)
        node = _failing_node(proto, target, why)
        if node:
            raise SurgeonError(f"cannot convert node {node} from opset {have} to {target} "
                               f"(onnx.version_converter: {why})") from None
        raise SurgeonError(f"cannot convert the model from opset {have} to {target} "
                           f"(onnx.version_converter: {why})") from None
    graph, new = proto.graph, converted.graph
    passed = {t.name for t in skeleton.graph.initializer}  # came back, possibly rewritten
    weights = {t.name for t in graph.initializer}
    listed = {i.name for i in graph.input}
    inits = graph.initializer
    for i in reversed(range(len(inits))):  # one by one: rebuilding the list would copy every weight
        if inits[i].name in passed:
            del inits[i]
    inits.extend(new.initializer)
    inputs = [i for i in new.input if i.name in listed or i.name not in weights]
    for field, values in (("node", new.node), ("input", inputs), ("output", new.output),
                          ("value_info", new.value_info)):
        container = getattr(graph, field)
        del container[:]
        container.extend(values)
    del proto.opset_import[:]
    proto.opset_import.extend(converted.opset_import)
    needed = helper.find_min_ir_version_for(list(proto.opset_import), ignore_unknown=True)
    proto.ir_version = max(proto.ir_version, needed)


def _failing_node(proto: ModelProto, target: int, why: str, limit: int = 2000) -> str | None:
    """The node the converter refuses, found by converting the nodes of the op type its message
    names one at a time (each with its input types and small constant inputs)."""
    named = re.findall(r"(?:for|operator '?)\s*'?([A-Z][A-Za-z0-9]*)", why)
    shapes = ShapeTable(proto)
    consts = {t.name: t for t in proto.graph.initializer if int(np.prod(t.dims)) <= SMALL and t.data_location != 1}
    imports = [o for o in proto.opset_import]
    for k, node in enumerate(n for n in walk_nodes(proto.graph.node) if n.domain in _DEFAULT):
        if k >= limit:
            break
        if named and node.op_type not in named:
            continue
        inputs, inits = [], []
        for value in dict.fromkeys(v for v in node.input if v):
            if value in consts:
                inits.append(consts[value])
                continue
            info = shapes.get(value)
            inputs.append(helper.make_tensor_value_info(value, info[0], info[1]) if info
                          else helper.make_empty_tensor_value_info(value))
        outputs = [helper.make_empty_tensor_value_info(v) for v in node.output if v]
        one = helper.make_model(helper.make_graph([node], "one", inputs, outputs, inits), opset_imports=imports,
                                ir_version=proto.ir_version)
        try:
            version_converter.convert_version(one, target)
        except Exception:
            name = node.name or f"{node.op_type}->{node.output[0] if node.output else '?'}"
            return f"{name} ({node.op_type})"
    return None
