"""The model as the rules read it: every node with the graph holding it, producers, small
constants, shapes (declared, else inferred once), opsets, and whether an int tensor is a size
computed from shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
from onnx import AttributeProto, ModelProto, NodeProto, numpy_helper

from ..graph.node import subgraphs_of
from ..rewrite.shapes import ShapeTable

DEFAULT_DOMAINS = ("", "ai.onnx")
SMALL = 64  # constants up to this many elements are read (sizes, axes)
# Ops that only move or combine sizes: a value computed from Shape through these alone is a size.
SHAPE_ARITHMETIC = {"Shape", "Size", "Constant", "Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Cast",
                    "Reshape", "Identity", "Add", "Sub", "Mul", "Div", "Max", "Min", "Floor", "Ceil", "Expand",
                    "ConstantOfShape", "Range", "ReduceProd", "Neg", "Abs"}


@dataclass
class ScopedNode:
    """A node and the graph holding it ("main", or the path of an If/Loop/Scan body)."""

    node: NodeProto
    graph: str

    @property
    def name(self) -> str:
        return self.node.name or (self.node.output[0] if self.node.output else self.node.op_type)

    @property
    def domain(self) -> str:
        return "" if self.node.domain in DEFAULT_DOMAINS else self.node.domain


class ModelView:
    def __init__(self, proto: ModelProto):
        self.proto = proto
        self.sites = list(_walk(proto.graph, "main"))
        self.producer = {o: s for s in self.sites for o in s.node.output if o}
        self._inits = {t.name: t for t in _all_initializers(proto.graph)}
        self.graph_inputs = {i.name for i in proto.graph.input} - set(self._inits)
        self.shapes = ShapeTable(proto)
        self.functions = {(f.domain, f.name) for f in proto.functions}

    def opset(self, domain: str = "") -> int | None:
        for o in self.proto.opset_import:
            if (o.domain in DEFAULT_DOMAINS and domain in DEFAULT_DOMAINS) or o.domain == domain:
                return o.version
        return None

    def elem_type(self, value: str) -> int | None:
        info = self.shapes.get(value) if value else None
        return info[0] if info else None

    def dims(self, value: str) -> tuple | None:
        info = self.shapes.get(value) if value else None
        return info[1] if info else None

    def constant(self, value: str) -> np.ndarray | None:
        """The value of a small initializer or Constant output, else None."""
        tensor = self._inits.get(value)
        if tensor is None:
            site = self.producer.get(value)
            if site is None or site.node.op_type != "Constant" or site.domain:
                return None
            tensor = next((a.t for a in site.node.attribute if a.name == "value" and a.type == AttributeProto.TENSOR),
                          None)
        if tensor is None or int(np.prod(tensor.dims)) > SMALL or tensor.data_location == 1:
            return None
        return numpy_helper.to_array(tensor)

    def is_initializer(self, value: str) -> bool:
        return value in self._inits

    def size_from_shapes(self, value: str, limit: int = 256) -> bool:
        """True when ``value`` is computed from tensor shapes (Shape/Size) and constants by size
        arithmetic alone: a size, whose values only exist at run time."""
        seen, stack, from_shape = set(), [value], False
        while stack and len(seen) < limit:
            v = stack.pop()
            if v in seen or not v:
                continue
            seen.add(v)
            site = self.producer.get(v)
            if site is None:
                if v in self._inits:
                    continue
                return False  # a graph input (or outer value): data, not a size
            if site.domain or site.node.op_type not in SHAPE_ARITHMETIC:
                return False
            if site.node.op_type in ("Shape", "Size"):
                from_shape = True
                continue
            stack.extend(site.node.input)
        return from_shape and not stack


def _walk(graph, path: str) -> Iterator[ScopedNode]:
    for node in graph.node:
        yield ScopedNode(node, path)
        for i, body in enumerate(subgraphs_of(node)):
            yield from _walk(body, f"{path}/{node.name or node.op_type}.{body.name or i}")


def _all_initializers(graph):
    yield from graph.initializer
    for node in graph.node:
        for body in subgraphs_of(node):
            yield from _all_initializers(body)
