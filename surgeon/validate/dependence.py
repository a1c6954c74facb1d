"""Which of a rewrite's inputs the model computes from one another.

The scale draws (scaled.py) draw each input of a rewrite on its own. Where one input is computed
from another (``x`` and ``relu(x)`` both read), drawing them apart feeds the rewrite a pair the
model never makes, and a right rewrite that relies on the pair would fail: such a rewrite is not
drawn. One pass over the graph, each value carrying the set of inputs it is computed from as the
bits of one int; a Shape or Size reads no data.
"""

from __future__ import annotations

from onnx import GraphProto

from ..graph.index import proto_reads

SHAPES = ("Shape", "Size")  # ops that read only their input's shape


def computed_from(graph: GraphProto, inputs: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """``({value: bits of the inputs it is computed from}, {input: its bit})``; each input
    carries its own bit too, and values no input reaches are left out."""
    bit = {name: 1 << k for k, name in enumerate(dict.fromkeys(inputs))}
    found = dict(bit)
    for node in graph.node:
        if node.op_type in SHAPES:
            continue
        mask = 0
        for r in proto_reads(node):
            mask |= found.get(r, 0)
        if mask:
            for out in node.output:
                if out:
                    found[out] = found.get(out, 0) | mask
    return found, bit


def entangled(leaves: list[str], masks: dict[str, int], bit: dict[str, int]) -> bool:
    """Whether one of ``leaves`` is computed from another (``masks``, ``bit``: ``computed_from``)."""
    every = 0
    for leaf in leaves:
        every |= bit.get(leaf, 0)
    return any(masks.get(leaf, 0) & (every & ~bit.get(leaf, 0)) for leaf in leaves)
