"""Writes standard nodes for a lowering: Constant nodes for constants (so a lowering works the
same inside If/Loop bodies), names that no value of the model has.

The same two calls as the op emitters plugins write through (``op``, ``const``), so a lowering
written against them also writes into a rewrite (``RewriteContext``) or a function body.
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, helper, numpy_helper


class NodeBuilder:
    def __init__(self, hint: str, taken: set[str]):
        self.nodes: list[NodeProto] = []
        self.hint = hint
        self._taken = taken  # every value and node name in the model, grown as names are made

    def fresh(self, what: str) -> str:
        k = 0
        while f"{self.hint}/{what}_{k}" in self._taken:
            k += 1
        name = f"{self.hint}/{what}_{k}"
        self._taken.add(name)
        return name

    def op(self, op_type: str, inputs, out: str | None = None, **attrs) -> str:
        return self.ops(op_type, inputs, [out or self.fresh(op_type.lower())], **attrs)[0]

    def ops(self, op_type: str, inputs, outputs: list[str], **attrs) -> list[str]:
        """A node with several outputs (Split)."""
        node = helper.make_node(op_type, list(inputs), list(outputs), name=self.fresh(op_type), **attrs)
        self.nodes.append(node)
        return list(outputs)

    def const(self, values, dtype=np.int64) -> str:
        tensor = numpy_helper.from_array(np.asarray(values, dtype=dtype))
        return self.op("Constant", [], value=tensor)

    def copy(self, node: NodeProto, drop: tuple[str, ...] = (), inputs: list[str] | None = None) -> None:
        """``node`` as it is (its meaning is the same at the target), less the attributes ``drop``."""
        kept = NodeProto()
        kept.CopyFrom(node)
        if inputs is not None:
            del kept.input[:]
            kept.input.extend(inputs)
        if drop:
            attrs = [a for a in kept.attribute if a.name not in drop]
            del kept.attribute[:]
            kept.attribute.extend(attrs)
        self.nodes.append(kept)
