"""Stable topological order: nodes keep their original order wherever the data allows."""

from __future__ import annotations

import heapq

from ..errors import SurgeonError
from .index import reads_of
from .node import Node


def toposort(nodes: list[Node]) -> list[Node]:
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
