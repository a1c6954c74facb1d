"""Producers, consumers, initializers and graph boundaries of one graph, built in one pass."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from onnx import GraphProto, TensorProto

from .node import Node


def free_values(graph: GraphProto) -> set[str]:
    """Names a (sub)graph reads from enclosing scopes."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    used: set[str] = set()
    for proto in graph.node:
        used.update(n for n in proto.input if n)
        defined.update(proto.output)
        for body in Node(proto, 0).subgraphs():
            used |= free_values(body)
    used.update(o.name for o in graph.output)
    return used - defined


class GraphIndex:
    """Index of one graph. ``parent`` is the enclosing graph's index for If/Loop/Scan bodies."""

    def __init__(self, graph: GraphProto, parent: "GraphIndex | None" = None):
        self.graph = graph
        self.parent = parent
        self.nodes: list[Node] = [Node(p, float(i)) for i, p in enumerate(graph.node)]
        self.producer: dict[str, Node] = {}
        self.consumers: dict[str, list[Node]] = defaultdict(list)
        for node in self.nodes:
            for out in node.proto.output:
                if out:
                    self.producer[out] = node
            seen = set()
            for name in node.proto.input:
                if name and name not in seen:
                    seen.add(name)
                    self.consumers[name].append(node)
            for body in node.subgraphs():  # a body reading an outer value is a consumer of it
                for name in free_values(body) - seen:
                    seen.add(name)
                    self.consumers[name].append(node)
        self.initializers: dict[str, TensorProto] = {t.name: t for t in graph.initializer}
        self.input_names = [i.name for i in graph.input]
        self.output_names = [o.name for o in graph.output]
        self._outputs = set(self.output_names)

    def is_output(self, value: str) -> bool:
        return value in self._outputs

    def find_producer(self, value: str) -> Node | None:
        """Producer in this graph; None for inputs, initializers and outer-scope values."""
        return self.producer.get(value)

    def find_initializer(self, value: str) -> TensorProto | None:
        scope: GraphIndex | None = self
        while scope is not None:
            if value in scope.initializers:
                return scope.initializers[value]
            if value in scope.producer or value in scope.input_names:
                return None  # shadowed by a computed value in this scope
            scope = scope.parent
        return None

    def outer_producer(self, value: str) -> Node | None:
        scope = self.parent
        while scope is not None:
            if value in scope.producer:
                return scope.producer[value]
            scope = scope.parent
        return None

    def consumers_of(self, value: str) -> list[Node]:
        return list(self.consumers.get(value, ()))

    def all_value_names(self) -> Iterable[str]:
        yield from self.input_names
        yield from self.initializers
        yield from self.producer
