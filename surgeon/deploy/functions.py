"""Model-local functions for the custom ops a model holds (``fuse(functions=True)``): each
node stays one custom node for engines with a plugin, while runtimes that inline functions
(onnxruntime, ``onnx.reference``) run the body the plugin's ``CustomOp.function`` gives.

A function's inputs are fixed and the reference evaluator ignores ``overload``: one body per
op, so a model needing two (different arities) is an error. Declared attribute defaults are
not applied by the reference evaluator or the inliners: they are written on every node.

A body may need a later opset than the model's (GridSample starts at 16; a volume needs 20):
that is an error naming the opset, and ``raise_opset`` converts the model to it first (asked
for, not done by default: every standard node changes with it, and a runtime pinned to the
model's opset may not load the result).
"""

from __future__ import annotations

from onnx import FunctionProto, ModelProto

from ..errors import SurgeonError
from ..graph.node import subgraphs_of
from .opsets import convert, default_opset
from ..runtime.schedule import ORT_DOMAINS
from ..rewrite.shapes import ShapeTable

MIN_IR = 8  # model-local functions


def _custom_nodes(nodes):
    for node in nodes:
        if node.domain not in ORT_DOMAINS:
            yield node
        for body in subgraphs_of(node):
            yield from _custom_nodes(body.node)


def _label(node) -> str:
    return f"{node.name} ({node.domain}::{node.op_type})" if node.name else f"{node.domain}::{node.op_type}"


RAISE_AT_MOST = 21  # the highest opset raise_opset tries (onnxruntime 1.18, the oldest supported, runs 21)


def _shapes_of(node, shapes: ShapeTable) -> list:
    given = list(node.input)
    while given and not given[-1]:
        given.pop()
    return [(shapes.get(v) or (None, None))[1] if v else None for v in given]


def needed_opset(proto: ModelProto, plugins, opset: int) -> int | None:
    """The lowest opset from ``opset`` on at which every custom node's plugin gives a body (None:
    none up to RAISE_AT_MOST)."""
    shapes, needed = ShapeTable(proto), opset
    for node in _custom_nodes(proto.graph.node):
        op = plugins.op(node.domain, node.op_type)
        if op is None or op.function is None:
            continue
        found = next((v for v in range(needed, RAISE_AT_MOST + 1)
                      if not isinstance(op.function(v, _shapes_of(node, shapes)), str)), None)
        if found is None:
            return None
        needed = found
    return needed


def attach_functions(proto: ModelProto, plugins, raise_opset: bool = False) -> list[str]:
    """Add (or replace) a FunctionProto for every custom op of ``proto`` whose plugin brings
    one; returns report notes. Raises SurgeonError when a node cannot get a body at the model's
    opset, unless ``raise_opset`` (then the model is converted to the lowest opset where every
    body can be written)."""
    opset = default_opset(proto)
    if opset is None:
        raise SurgeonError("functions: the model imports no default-domain opset")
    notes = []
    if raise_opset:
        needed = needed_opset(proto, plugins, opset)
        if needed is not None and needed > opset:
            notes.extend(convert(proto, needed))
            notes.append(f"functions: raised the model from opset {opset} to {needed}, the lowest the function "
                         "bodies can be written at (onnx.version_converter)")
            opset = needed
    shapes = ShapeTable(proto)
    bodies: dict[tuple[str, str], tuple[FunctionProto, bytes, str]] = {}
    nodes, left = [], []
    for node in _custom_nodes(proto.graph.node):
        op = plugins.op(node.domain, node.op_type)
        if op is None or op.function is None:
            left.append(_label(node))
            continue
        body = op.function(opset, _shapes_of(node, shapes))
        if isinstance(body, str):
            needed = needed_opset(proto, plugins, opset)
            hint = (f"; --raise-opset (raise_opset=True) converts the model to opset {needed} first"
                    if needed is not None and needed > opset else "")
            raise SurgeonError(f"functions: node {_label(node)} has no function body at opset {opset}: {body}{hint}")
        key, data = (node.domain, node.op_type), body.SerializeToString()
        seen = bodies.setdefault(key, (body, data, _label(node)))
        if seen[1] != data:
            raise SurgeonError(f"functions: nodes {seen[2]} and {_label(node)} need different bodies (e.g. one "
                               f"with the size input, one without); a model-local function has one per op")
        nodes.append(node)
    for node in nodes:
        _write_defaults(node, bodies[(node.domain, node.op_type)][0])
    for key, (body, _, _) in bodies.items():
        _check_imports(proto, body)
        kept = [f for f in proto.functions if (f.domain, f.name) != key]
        del proto.functions[:]
        proto.functions.extend(kept + [body])
    if bodies:
        proto.ir_version = max(proto.ir_version, MIN_IR)
    notes += [f"functions: {d}::{o} (opset {opset})" for d, o in bodies]
    if left:
        notes.append(f"functions: no plugin brings a function body for {', '.join(sorted(set(left)))}")
    return notes


def _write_defaults(node, body: FunctionProto) -> None:
    """Every attribute the body declares a default for, written on the node when it lacks it."""
    have = {a.name for a in node.attribute}
    for default in body.attribute_proto:
        if default.name not in have:
            node.attribute.add().CopyFrom(default)


def _check_imports(proto: ModelProto, body: FunctionProto) -> None:
    """A body's imports must match the model's (the checker and runtimes require it)."""
    have = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in proto.opset_import}
    for o in body.opset_import:
        domain = "" if o.domain == "ai.onnx" else o.domain
        if domain not in have:
            proto.opset_import.add(domain=o.domain, version=o.version)
            have[domain] = o.version
        elif have[domain] != o.version:
            raise SurgeonError(f"functions: the body of {body.domain}::{body.name} imports {domain or 'ai.onnx'} "
                               f"version {o.version}; the model imports version {have[domain]}")
