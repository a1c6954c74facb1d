"""Which model inputs a plugin wants drawn its own way for validation.

A custom op may say how to draw some of its inputs (``CustomOp.draw_inputs``): a transform
matrix drawn as uniform noise never reflects or rotates, so a rewrite that gets those cases wrong
would pass. A model input is drawn that way when it reaches such an op input through ops that
change only its shape or type.
"""

from __future__ import annotations

from typing import Callable

from onnx import ModelProto

# Ops that pass their first input's values on, rearranged or converted, but not computed with.
_PASS_THROUGH = frozenset({"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast", "Slice", "Expand"})


def input_drawers(model: ModelProto, plugins) -> dict[str, Callable]:
    """``{model input name: draw(shape, dtype, rng)}`` for the custom nodes of ``model``."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    inputs = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    found: dict[str, Callable] = {}
    for node in graph.node:
        if node.domain in ("", "ai.onnx"):
            continue
        try:
            op = plugins.op(node.domain, node.op_type)
        except Exception:  # an unresolved plugin conflict is reported where the op is run
            op = None
        for index, draw in ((op.draw_inputs or {}).items() if op is not None else ()):
            value = node.input[index] if index < len(node.input) else ""
            while value and value not in inputs and value in producer:
                step = producer[value]
                if step.domain not in ("", "ai.onnx") or step.op_type not in _PASS_THROUGH:
                    break
                value = step.input[0]
            if value in inputs:
                found.setdefault(value, draw)
    return found


def describe(draw: Callable) -> str:
    text = (draw.__doc__ or draw.__name__).strip().splitlines()
    return text[0].rstrip(".") if text else draw.__name__
