"""For ``unfuse --opset N``: standard nodes whose op starts after opset N, where a plugin brings
an op equal to it (``CustomOp.standard_op``). Each is carried across the opset conversion as that
op (onnx.version_converter leaves custom domains alone), and unfuse then writes it at N with the
op's ``to_standard``, exactly as it writes the plugin's own nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

from onnx import ModelProto

from ..graph.node import Node
from .lowering.schemas import first_version, schema
from ..graph.walk import walk_nodes

_DEFAULT = ("", "ai.onnx")


@dataclass
class Carried:
    notes: list[str] = field(default_factory=list)  # one per standard op carried
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # label as the plugin op -> (as it was, the op)


def carry_as_plugin_ops(proto: ModelProto, plugins, target: int) -> Carried:
    """Rename, in place, every such node to its plugin op (bodies included), importing the op's
    domain where needed."""
    carried, counts = Carried(), {}
    for node in walk_nodes(proto.graph.node):
        if node.domain not in _DEFAULT or schema(node.op_type, target) is not None:
            continue
        op = plugins.equal_to_standard(node.op_type)
        if op is None:
            continue  # the conversion names it: the op does not exist at the target
        was = Node(node, 0).label
        standard, (node.domain, node.op_type) = node.op_type, (op.domain, op.op_type)
        carried.labels[Node(node, 0).label] = (was, op.label)
        counts[standard] = (op, counts.get(standard, (op, 0))[1] + 1)
    imported = {o.domain for o in proto.opset_import}
    versions = plugins.domains()
    for standard, (op, count) in counts.items():
        if op.domain not in imported:
            proto.opset_import.add(domain=op.domain, version=versions.get(op.domain, 1))
            imported.add(op.domain)
        carried.notes.append(f"wrote {count} {standard} node(s) as {op.label}'s standard form ({standard} starts at "
                             f"opset {first_version(standard)}; {op.label} computes the same)")
    return carried
