"""The walk back from values to what computes them, one for every walk that cuts or slices a
region: ``backward_slice`` (extract.py), the recogniser's cut (recognise/region.py), the driver's
cycle check and the symbolic cut (recognise/cutting.py; ``surgeon.BackWalk``).

The walk visits each value once (an absent optional input, ``""``, never) and leaves every
decision to its caller, who knows what a value is: at each, go on into what its producer reads
(``into``), keep the producer as part of the region (``take``), or stop there, as a leaf, a
refusal or a boundary, by not going on. Values are walked as a stack, depth first: the last
value given to ``into`` comes next.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from .node import subgraphs_of


class BackWalk:
    """::

        walk = BackWalk([output])
        for value in walk:
            node = ctx.producer(value)
            if node is None or stop_here(value):
                continue                      # a leaf
            walk.take(node)
            walk.into(node.inputs)
        region = walk.nodes()                 # in graph order
    """

    def __init__(self, values: Iterable[str]):
        self._stack = list(values)
        self._seen: set[str] = set()
        self._taken: dict[int, object] = {}

    def __iter__(self) -> Iterator[str]:
        while self._stack:
            value = self._stack.pop()
            if value and value not in self._seen:
                self._seen.add(value)
                yield value

    def into(self, values: Iterable[str]) -> None:
        """Walk these values next, the last one first."""
        self._stack.extend(values)

    def take(self, node) -> bool:
        """Keep ``node`` in the region; False when it was kept already (reached through another
        of its outputs)."""
        if id(node) in self._taken:
            return False
        self._taken[id(node)] = node
        return True

    @property
    def taken(self) -> int:
        """How many nodes are kept."""
        return len(self._taken)

    def nodes(self) -> list:
        """The kept nodes in graph order (``Node.position``)."""
        return sorted(self._taken.values(), key=lambda n: n.position)


def computing(producer, values: Iterable[str], nodes) -> list:
    """The nodes among ``nodes`` that ``values`` depend on (``producer(value)``: its node or None)."""
    members = {id(n) for n in nodes}
    walk = BackWalk(values)
    for v in walk:
        node = producer(v)
        if node is not None and id(node) in members and walk.take(node):
            walk.into(node.inputs)
    return walk.nodes()


def walk_nodes(nodes):
    """Nodes and the nodes of their bodies (If/Loop/Scan), recursively."""
    for node in nodes:
        yield node
        for body in subgraphs_of(node):
            yield from walk_nodes(body.node)
