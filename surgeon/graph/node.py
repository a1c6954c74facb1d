"""A read-mostly view of a NodeProto with decoded attributes."""

from __future__ import annotations

from typing import Any

from onnx import AttributeProto, GraphProto, NodeProto

from .attrs import read_attribute

_DEFAULT_DOMAINS = ("", "ai.onnx")
# Standard ops that carry graphs; reading every node's attributes costs more than the check.
_CONTROL_FLOW = {"If", "Loop", "Scan", "SequenceMap"}


def subgraphs_of(proto: NodeProto) -> list[GraphProto]:
    """The bodies of an If/Loop/Scan (or of a custom-domain node that carries graphs)."""
    if proto.domain in _DEFAULT_DOMAINS and proto.op_type not in _CONTROL_FLOW:
        return []
    found = []
    for a in proto.attribute:
        if a.type == AttributeProto.GRAPH:
            found.append(a.g)
        elif a.type == AttributeProto.GRAPHS:
            found.extend(a.graphs)
    return found


def is_op(node: "Node | NodeProto | None", op_type: str, domain: str = "") -> bool:
    """True when the node is ``domain::op_type`` ("" and "ai.onnx" are the same domain)."""
    if node is None or node.op_type != op_type:
        return False
    if domain in _DEFAULT_DOMAINS:
        return node.domain in _DEFAULT_DOMAINS
    return node.domain == domain


def shape_range(node: "Node", rank: int) -> tuple[int, int]:
    """The dims ``[start, end)`` an ONNX ``Shape`` node returns of an input of ``rank`` dims: its
    ``start``/``end`` attributes (default 0 and ``rank``) count from the end when negative and are
    clamped to ``[0, rank]``; ``end <= start`` is no dims. The one reading of those attributes."""
    def clamp(i: int) -> int:
        return max(0, min(rank, i + rank if i < 0 else i))

    return clamp(node.attr("start", 0)), clamp(node.attr("end", rank))


class Node:
    """A node of the graph being rewritten. ``inputs``/``outputs`` are value names ("" = absent)."""

    __slots__ = ("proto", "position", "_attrs", "_ins", "_outs")

    def __init__(self, proto: NodeProto, position: float):
        self.proto = proto
        self.position = position  # order in the original graph; new nodes take their anchor's
        self._attrs: dict[str, Any] | None = None
        self._ins: tuple[str, ...] | None = None
        self._outs: tuple[str, ...] | None = None

    op_type = property(lambda self: self.proto.op_type)
    domain = property(lambda self: self.proto.domain)
    name = property(lambda self: self.proto.name)

    @property
    def inputs(self) -> list[str]:
        return list(self.proto.input)

    @property
    def outputs(self) -> list[str]:
        return list(self.proto.output)

    # The engine reads a node's inputs and outputs many times while it matches and rewrites, and
    # each read of a protobuf field builds its strings again: ``ins`` and ``outs`` are read once.
    # A rewrite never changes the nodes it indexed; code that changes a proto's inputs or
    # outputs after reading these calls ``forget_io``. (``inputs``/``outputs`` always read anew.)
    @property
    def ins(self) -> tuple[str, ...]:
        ins = self._ins
        if ins is None:
            ins = self._ins = tuple(self.proto.input)
        return ins

    @property
    def outs(self) -> tuple[str, ...]:
        outs = self._outs
        if outs is None:
            outs = self._outs = tuple(self.proto.output)
        return outs

    def forget_io(self) -> None:
        """Read ``ins`` and ``outs`` from the proto again (it was changed)."""
        self._ins = self._outs = None

    @property
    def attrs(self) -> dict[str, Any]:
        """Attributes as plain values (STRING -> str, TENSOR -> numpy, GRAPH -> GraphProto)."""
        if self._attrs is None:
            self._attrs = {a.name: read_attribute(a) for a in self.proto.attribute}
        return self._attrs

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def is_op(self, op_type: str, domain: str = "") -> bool:
        return is_op(self, op_type, domain)

    def subgraphs(self) -> list[GraphProto]:
        return subgraphs_of(self.proto)


    @property
    def label(self) -> str:
        """How reports name a node: its name, or its type and first output."""
        op = f"{self.domain}::{self.op_type}" if self.domain not in _DEFAULT_DOMAINS else self.op_type
        return f"{self.name} ({op})" if self.name else f"{op} -> {self.proto.output[0] if self.proto.output else '?'}"

    def __repr__(self) -> str:
        return f"Node({self.label})"
