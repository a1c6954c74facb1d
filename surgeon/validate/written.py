"""Which nodes of a rewritten model a rewrite wrote: the ones no node of the original equals.

A node the rewrite kept is the original's node: same op, attributes, inputs and outputs (the
engine keeps every name it does not replace). Anything else was written by a rewrite, whatever
its domain: a custom op, a contrib op (``com.microsoft::Gelu``) or a standard one (``Gemm``).
Names, doc strings and metadata are not part of what a node computes, so they do not count.
An ``If`` whose branch a rewrite changed differs from the original's; the nodes written are
then the ones inside its bodies that the original lacks.
"""

from __future__ import annotations

from onnx import AttributeProto, GraphProto, ModelProto, NodeProto

from ..reportfields import body_scope
from ..graph.node import subgraphs_of


def node_key(node: NodeProto) -> bytes:
    """What the node computes, as bytes: op, domain, inputs, outputs and attributes."""
    bare = NodeProto()
    bare.CopyFrom(node)
    bare.name = ""
    bare.doc_string = ""
    del bare.metadata_props[:]
    if bare.domain == "ai.onnx":
        bare.domain = ""
    return bare.SerializeToString(deterministic=True)


class WrittenNodes:
    """Answers whether a node of the rewritten model is one a rewrite wrote."""

    def __init__(self, original: ModelProto):
        self._keys: set[bytes] = set()
        self._add(original.graph)

    def _add(self, graph: GraphProto) -> None:
        for node in graph.node:
            self._keys.add(node_key(node))
            for body in subgraphs_of(node):
                self._add(body)

    def is_new(self, node: NodeProto) -> bool:
        return node_key(node) not in self._keys

    def within(self, node: NodeProto, scope: str = "main") -> list[tuple[NodeProto, str]]:
        """The nodes a rewrite wrote at ``node`` (a new node of the graph ``scope``), each with
        the graph holding it: itself, or for a node whose bodies changed, the new nodes inside
        them (the node itself when none is found, or when it carries a pattern's tag: then a
        rewrite wrote it, bodies and all)."""
        if any(e.key == "surgeon.pattern" for e in node.metadata_props):
            return [(node, scope)]
        found: list[tuple[NodeProto, str]] = []
        for attr in node.attribute:
            bodies = [attr.g] if attr.type == AttributeProto.GRAPH else list(attr.graphs)
            for k, body in enumerate(bodies):
                inner_scope = body_scope(scope, node, attr.name, k, len(bodies))
                for inner in body.node:
                    if self.is_new(inner):
                        found.extend(self.within(inner, inner_scope))
        return found or [(node, scope)]
