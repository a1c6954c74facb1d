"""Around onnx.version_converter: before it, every default-domain node is checked against the
target's schemas and each node an op of LOWERINGS lowers is swapped for a placeholder in a
private domain (the converter leaves other domains alone); after it, the placeholders are swapped
for the lowered nodes. Bodies of If/Loop/Scan are walked too: the converter converts them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, helper, numpy_helper

from ...errors import SurgeonError
from ...graph.node import subgraphs_of
from ...rewrite.shapes import ShapeTable
from .builder import NodeBuilder
from .registry import LOWERINGS
from .schemas import first_version, schema, type_misfit, version_at
from .site import Site

PLACEHOLDER_DOMAIN = "surgeon.lowering"
_DEFAULT = ("", "ai.onnx")
_SMALL = 64  # constants read by lowerings (axes, pads) are this small


@dataclass
class Hidden:
    nodes: list[list[NodeProto]] = field(default_factory=list)  # placeholder index -> lowered nodes
    originals: list[NodeProto] = field(default_factory=list)  # placeholder index -> the node it stands for

    def note(self, have: int, target: int) -> str | None:
        if not self.nodes:
            return None
        ops = sorted({n.op_type for n in self.originals})
        return (f"lowered {len(self.nodes)} node(s) ({', '.join(ops)}) from opset {have} to {target} by hand: "
                "onnx.version_converter cannot step them down")


def _label(node: NodeProto, graph: str) -> str:
    name = node.name or f"{node.op_type}->{node.output[0] if node.output else '?'}"
    return f"{name} ({node.op_type})" + ("" if graph == "main" else f" [{graph}]")


def _graphs(graph: GraphProto, path: str = "main"):
    yield graph, path
    for node in graph.node:
        for i, body in enumerate(subgraphs_of(node)):
            yield from _graphs(body, f"{path}/{node.name or node.op_type}.{body.name or i}")


def _constants(proto: ModelProto) -> dict[str, np.ndarray]:
    found = {}
    for graph, _ in _graphs(proto.graph):
        for t in graph.initializer:
            if int(np.prod(t.dims)) <= _SMALL and t.data_location != 1:
                found[t.name] = numpy_helper.to_array(t)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in _DEFAULT and node.output:
                value = next((a.t for a in node.attribute if a.name == "value" and a.type == AttributeProto.TENSOR),
                             None)
                if value is not None and int(np.prod(value.dims)) <= _SMALL:
                    found[node.output[0]] = numpy_helper.to_array(value)
    return found


def _names(proto: ModelProto) -> set[str]:
    names = set()
    for graph, _ in _graphs(proto.graph):
        for node in graph.node:
            names.update(node.input)
            names.update(node.output)
            names.add(node.name)
        names.update(v.name for v in list(graph.input) + list(graph.initializer))
    return names


def hide(proto: ModelProto, have: int, target: int) -> Hidden:
    """Check and lower for a conversion from ``have`` down to ``target`` (nothing to do going up)."""
    hidden = Hidden()
    if target >= have:
        return hidden
    shapes, constants, taken = ShapeTable(proto), None, _names(proto)
    errors: list[str] = []

    def elem_of(value):
        info = shapes.get(value)
        return info[0] if info else None

    def dims_of(value):
        info = shapes.get(value)
        return info[1] if info else None

    for graph, path in list(_graphs(proto.graph)):
        for i, node in enumerate(graph.node):
            if node.domain not in _DEFAULT:
                continue
            if schema(node.op_type, target) is None and node.op_type not in LOWERINGS:
                since = first_version(node.op_type)
                errors.append(f"cannot write node {_label(node, path)} at opset {target}: {node.op_type} "
                              + (f"exists from opset {since} on" if since else "is not a standard op"))
                continue
            misfit = type_misfit(node, target, elem_of)
            if misfit:
                errors.append(f"cannot write node {_label(node, path)} at opset {target}: {misfit}")
                continue
            version = version_at(node.op_type, have)
            lowering = LOWERINGS.get(node.op_type)
            if version is None or lowering is None or not version >= lowering.since > target:
                continue
            if constants is None:
                constants = _constants(proto)
            hint = f"{node.name or node.op_type}/opset{target}"
            site = Site(node, have, target, NodeBuilder(hint, taken), elem_of, dims_of, constants.get)
            reason = lowering.lower(site)
            if reason:
                errors.append(f"cannot write node {_label(node, path)} at opset {target}: {reason}")
                continue
            placeholder = helper.make_node("Lowered", list(node.input), list(node.output), name=node.name,
                                           domain=PLACEHOLDER_DOMAIN, index=len(hidden.nodes))
            hidden.nodes.append(site.build.nodes)
            hidden.originals.append(NodeProto())
            hidden.originals[-1].CopyFrom(node)
            graph.node[i].CopyFrom(placeholder)
    if errors:
        _swap(proto, [[n] for n in hidden.originals])  # the model as it was
        more = f" (and {len(errors) - 1} more node(s))" if len(errors) > 1 else ""
        raise SurgeonError(errors[0] + more)
    if hidden.nodes:
        proto.opset_import.add(domain=PLACEHOLDER_DOMAIN, version=1)
    return hidden


def restore(proto: ModelProto, hidden: Hidden) -> None:
    """Put the lowered nodes where their placeholders are, and drop the placeholder domain."""
    if hidden.nodes:
        _swap(proto, hidden.nodes)


def _swap(proto: ModelProto, replacements: list[list[NodeProto]]) -> None:
    for graph, _ in list(_graphs(proto.graph)):
        if not any(n.domain == PLACEHOLDER_DOMAIN for n in graph.node):
            continue
        nodes = []
        for node in graph.node:
            if node.domain == PLACEHOLDER_DOMAIN:
                nodes.extend(replacements[next(a.i for a in node.attribute if a.name == "index")])
            else:
                nodes.append(node)
        del graph.node[:]
        graph.node.extend(nodes)
    kept = [o for o in proto.opset_import if o.domain != PLACEHOLDER_DOMAIN]
    del proto.opset_import[:]
    proto.opset_import.extend(kept)
