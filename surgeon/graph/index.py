"""Producers, consumers, initializers and graph boundaries of one graph: built in one pass, then
kept up to date as rewrites remove and add nodes (rebuilding costs more than a whole rewrite)."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from onnx import GraphProto, NodeProto, TensorProto

from .node import _CONTROL_FLOW, _DEFAULT_DOMAINS, Node, subgraphs_of


def free_values(graph: GraphProto) -> set[str]:
    """Names a (sub)graph reads from enclosing scopes."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    used: set[str] = set()
    for proto in graph.node:
        used.update(n for n in proto.input if n)
        defined.update(proto.output)
        for body in subgraphs_of(proto):
            used |= free_values(body)
    used.update(o.name for o in graph.output)
    return used - defined


def proto_reads(proto: NodeProto) -> list[str]:
    """Values a node (a NodeProto) needs: its inputs, and whatever its bodies read from outside."""
    names = [n for n in proto.input if n]
    for body in subgraphs_of(proto):
        names.extend(sorted(free_values(body)))
    return list(dict.fromkeys(names))


def reads_of(node: Node) -> list[str]:
    """Every value a node reads: its inputs, and what its bodies read from outside."""
    proto = node.proto
    names = [n for n in dict.fromkeys(proto.input) if n]
    if proto.domain in _DEFAULT_DOMAINS and proto.op_type not in _CONTROL_FLOW:
        return names  # no bodies: the common case, without building a list of them
    for body in subgraphs_of(proto):
        names.extend(sorted(free_values(body) - set(names)))
    return names


class GraphIndex:
    """Index of one graph. ``parent`` is the enclosing graph's index for If/Loop/Scan bodies.

    ``nodes`` is in topological order; ``position`` numbers it (``renumber`` after changes).
    """

    def __init__(self, graph: GraphProto, parent: "GraphIndex | None" = None, ir_version: int | None = None):
        """``ir_version``: the model's; from IR 4 an initializer listed among the inputs is a
        default the caller may override (onnxruntime's overridable initializers), before it a
        constant that old IRs had to list there."""
        self.graph = graph
        self.parent = parent
        self.version = 0  # counts changes: what was computed from the graph before may be stale
        self.ir_version = ir_version if ir_version is not None else (parent.ir_version if parent else 4)
        self.nodes: list[Node] = []
        self._gone: set[int] = set()
        self.producer: dict[str, Node] = {}
        # value -> {id(node): node}, in the order readers were added: removing one reader of a
        # value read by thousands (a shared input, a constant) is O(1), not a list rebuild
        self.consumers: dict[str, dict[int, Node]] = defaultdict(dict)
        nodes, producer, consumers = self.nodes, self.producer, self.consumers
        for i, proto in enumerate(graph.node):  # ``add``, inlined: once per node of the model
            node = Node(proto, float(i))
            nodes.append(node)
            node._ins, node._outs = ins, outs = tuple(proto.input), tuple(proto.output)
            for out in outs:
                if out:
                    producer[out] = node
            key = id(node)
            for name in ins:
                if name:
                    consumers[name][key] = node
            if proto.domain not in _DEFAULT_DOMAINS or proto.op_type in _CONTROL_FLOW:
                for name in reads_of(node):
                    consumers[name][key] = node
        self.version += len(nodes)
        self.initializers: dict[str, TensorProto] = {t.name: t for t in graph.initializer}
        self.input_names = [i.name for i in graph.input]
        self.output_names = [o.name for o in graph.output]
        self._outputs = set(self.output_names)

    def add(self, node: Node) -> None:
        self.version += 1
        self.nodes.append(node)
        proto = node.proto
        for out in node.outs:
            if out:
                self.producer[out] = node
        consumers = self.consumers
        key = id(node)
        for name in node.ins:  # the hot loop of indexing: kept free of helper calls
            if name:
                consumers[name][key] = node
        if subgraphs_of(proto):
            for name in reads_of(node):
                consumers[name][key] = node

    def remove(self, nodes: Iterable[Node]) -> None:
        """Unlink nodes from the maps; ``nodes`` drops them at the next ``compact``."""
        nodes = list(nodes)
        self.version += 1
        gone = self._gone
        producer, consumers = self.producer, self.consumers
        for node in nodes:
            key = id(node)
            gone.add(key)
            proto = node.proto
            for out in node.outs:
                if producer.get(out) is node:
                    del producer[out]
            # A node without bodies reads its inputs (a name twice is harmless here); one with
            # bodies also what they read from outside.
            plain = proto.domain in _DEFAULT_DOMAINS and proto.op_type not in _CONTROL_FLOW
            for name in node.ins if plain else reads_of(node):
                readers = consumers.get(name)
                if readers is not None:
                    readers.pop(key, None)
                    if not readers:
                        del consumers[name]

    def compact(self) -> list[Node]:
        """``nodes`` without the removed ones (one pass however many were removed)."""
        if self._gone:
            self.nodes = [n for n in self.nodes if id(n) not in self._gone]
            self._gone = set()
        return self.nodes

    def reorder(self, nodes: list[Node]) -> None:
        """Adopt a new topological order and renumber positions to match it."""
        self.nodes = nodes
        self._gone = set()
        for i, node in enumerate(nodes):
            node.position = float(i)

    def add_initializer(self, tensor: TensorProto) -> None:
        self.version += 1
        self.graph.initializer.append(tensor)
        self.initializers[tensor.name] = tensor

    def is_output(self, value: str) -> bool:
        return value in self._outputs

    def find_producer(self, value: str) -> Node | None:
        """Producer in this graph; None for inputs, initializers and outer-scope values."""
        return self.producer.get(value)

    def find_initializer(self, value: str) -> TensorProto | None:
        """The initializer holding ``value``; None where it is computed, an outer value, or a graph
        input too: from IR 4 an initializer that is also an input is a default a caller may
        override at run time (``keep_initializers_as_inputs``), so it is no constant."""
        scope: GraphIndex | None = self
        while scope is not None:
            if value in scope.producer or (value in scope.input_names and scope.ir_version >= 4):
                return None  # computed, or fed, in this scope
            if value in scope.initializers:
                return scope.initializers[value]
            if value in scope.input_names:
                return None
            scope = scope.parent
        return None

    def is_overridable(self, value: str) -> bool:
        """An initializer that is also an input, in a model whose IR lets the caller override it."""
        return self.ir_version >= 4 and value in self.input_names and value in self.initializers

    def is_defined(self, value: str) -> bool:
        """Whether ``value`` exists here or in an enclosing scope (input, initializer, output of a node)."""
        scope: GraphIndex | None = self
        while scope is not None:
            if value in scope.producer or value in scope.initializers or value in scope.input_names:
                return True
            scope = scope.parent
        return False

    def outer_producer(self, value: str) -> Node | None:
        scope = self.parent
        while scope is not None:
            if value in scope.producer:
                return scope.producer[value]
            scope = scope.parent
        return None

    def consumers_of(self, value: str) -> list[Node]:
        readers = self.consumers.get(value)
        return list(readers.values()) if readers else []
