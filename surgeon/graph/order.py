"""Stable topological order: nodes keep their original order wherever the data allows."""

from __future__ import annotations

import heapq

from ..errors import SurgeonError
from .index import reads_of
from .node import _CONTROL_FLOW, _DEFAULT_DOMAINS, Node, subgraphs_of


def toposort(nodes: list[Node]) -> list[Node]:
    """Nodes in topological order, keeping positions where the data allows.

    Rewrites place their nodes at the position of the region they replace, so sorting by
    position is almost always already valid: check that in one pass before sorting for real."""
    by_position = sorted(nodes, key=lambda n: n.position)
    if _is_topological(by_position):
        return by_position
    return _kahn(nodes)


def _is_topological(nodes: list[Node]) -> bool:
    return _in_order([node.proto for node in nodes])


def _in_order(protos) -> bool:
    """Whether each NodeProto comes after the nodes computing what it reads (on the protos
    themselves: a model's load asks this of every node)."""
    produced_at = {out: i for i, proto in enumerate(protos) for out in proto.output}
    get = produced_at.get
    for i, proto in enumerate(protos):
        for value in proto.input:
            if get(value, -1) >= i:
                return False
        if (proto.domain not in _DEFAULT_DOMAINS or proto.op_type in _CONTROL_FLOW) and subgraphs_of(proto) \
                and any(get(v, -1) >= i for v in reads_of(Node(proto, i))):
            return False
    return True


def _kahn(nodes: list[Node]) -> list[Node]:
    """Kahn's algorithm keyed on each node's position (values no node here produces are given)."""
    producer_of: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for out in node.proto.output:
            if out:
                producer_of[out] = i
    waiting = [0] * len(nodes)
    dependents: list[list[int]] = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        for value in reads_of(node):
            j = producer_of.get(value)
            if j is not None and j != i:
                waiting[i] += 1
                dependents[j].append(i)
    heap = [(node.position, i) for i, node in enumerate(nodes) if waiting[i] == 0]
    heapq.heapify(heap)
    order: list[Node] = []
    while heap:
        _, i = heapq.heappop(heap)
        order.append(nodes[i])
        for k in dependents[i]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(heap, (nodes[k].position, k))
    if len(order) != len(nodes):
        raise SurgeonError("the rewritten graph has a cycle; no output written")
    return order


def sort_graph(graph) -> bool:
    """Sort a GraphProto's nodes in place so that each comes after what it reads (its bodies'
    reads from outside included), bodies too; True when any moved. Some tools write nodes out
    of order (onnxruntime's transformers float16 converter), which onnxruntime runs and the
    ONNX checker refuses; OpenVINO's frontend converts nodes in the order given. A cycle or a
    value nothing computes is left as it is, for the checker to name."""
    moved = any([sort_graph(body) for node in graph.node for body in subgraphs_of(node)])
    if _in_order(graph.node):  # what toposort checks first, without a Node per node
        return moved
    try:
        ordered = toposort([Node(node, k) for k, node in enumerate(graph.node)])
    except SurgeonError:
        return moved
    if all(node.position == k for k, node in enumerate(ordered)):
        return moved
    nodes = [type(graph.node[0])() for _ in ordered]
    for copy, node in zip(nodes, ordered):
        copy.CopyFrom(node.proto)
    del graph.node[:]
    graph.node.extend(nodes)
    return True
