"""Which model inputs a plugin wants drawn its own way for validation.

A custom op may say how to draw some of its inputs (``CustomOp.draw_inputs``): a transform
matrix drawn as uniform noise never reflects or rotates, so a rewrite that gets those cases wrong
would pass. A model input is drawn that way when it reaches such an op input through ops that
change only its shape or type.
"""

from __future__ import annotations

from typing import Callable

from onnx import ModelProto, TensorProto

# Ops that pass their first input's values on, rearranged or converted, but not computed with.
_PASS_THROUGH = frozenset({"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast", "Slice", "Expand"})
_FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE)


def _custom_ops(graph, plugins):
    """(node, its plugin op) for each custom node a plugin of the set provides."""
    for node in graph.node:
        if node.domain in ("", "ai.onnx"):
            continue
        try:
            op = plugins.op(node.domain, node.op_type)
        except Exception:  # an unresolved plugin conflict is reported where the op is run
            continue
        if op is not None:
            yield node, op


def input_drawers(model: ModelProto, plugins) -> dict[str, Callable]:
    """``{model input name: draw(shape, dtype, rng)}`` for the custom nodes of ``model``."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    inputs = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    found: dict[str, Callable] = {}
    for node, op in _custom_ops(graph, plugins):
        for index, draw in (op.draw_inputs or {}).items():
            value = node.input[index] if index < len(node.input) else ""
            while value and value not in inputs and value in producer:
                step = producer[value]
                if step.domain not in ("", "ai.onnx") or step.op_type not in _PASS_THROUGH:
                    break
                value = step.input[0]
            if value in inputs:
                found.setdefault(value, draw)
    return found


def far_drawers(model: ModelProto, plugins) -> dict[str, Callable]:
    """The far round's drawers: each input's own (its ``far`` variant is used), and every other
    float input of homogeneous-matrix shape (``[..., 3, 3]``, ``[..., 4, 4]``) drawn with a far
    transform draw the model's custom ops bring: a rewrite may read it through a map, not a
    shape-only path, and the rows past the affine ones are where reading an element the original
    never reads would show."""
    found = dict(input_drawers(model, plugins))
    graph = model.graph
    transform = None
    for _, op in _custom_ops(graph, plugins):
        transform = next((d for d in (op.draw_inputs or {}).values() if getattr(d, "far", None)), None)
        if transform is not None:
            break
    if transform is None:
        return found
    inits = {t.name for t in graph.initializer}
    for vi in graph.input:
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.name in inits or vi.name in found or vi.type.tensor_type.elem_type not in _FLOATS:
            continue
        if len(dims) >= 2 and tuple(dims[-2:]) in ((3, 3), (4, 4)):
            found[vi.name] = transform
    return found


def describe(draw: Callable) -> str:
    text = (draw.__doc__ or draw.__name__).strip().splitlines()
    return text[0].rstrip(".") if text else draw.__name__
