"""Which model inputs a plugin wants drawn its own way for validation.

A custom op may say how to draw some of its inputs (``CustomOp.draw_inputs``): a transform
matrix drawn as uniform noise never reflects or rotates, so a rewrite that gets those cases wrong
would pass. A pattern may say the same of the inputs of the nodes it writes
(``Pattern.draw_inputs``: rows near an epsilon, gates far negative). A model input is drawn that
way when it reaches such an input through ops that change only its shape or type; each rewrite's
own inputs are drawn that way too (scaled.py).
"""

from __future__ import annotations

from typing import Callable

from onnx import ModelProto, TensorProto

# Ops that pass their first input's values on, rearranged or converted, but not computed with.
_PASS_THROUGH = frozenset({"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast", "Slice", "Expand"})
_FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE)


def _custom_ops(nodes, plugins):
    """(node, its plugin op) for each custom node of ``nodes`` a plugin of the set provides."""
    for node in nodes:
        if node.domain in ("", "ai.onnx"):
            continue
        try:
            op = plugins.op(node.domain, node.op_type)
        except Exception:  # an unresolved plugin conflict is reported where the op is run
            continue
        if op is not None:
            yield node, op


def declared_draws(nodes, plugins) -> list[tuple[str, Callable]]:
    """``(value, draw)`` for each input of ``nodes`` a plugin declares a draw for: the custom
    op's (``CustomOp.draw_inputs``), then the pattern's that wrote the node (``Pattern.draw_inputs``,
    found by the node's ``surgeon.pattern`` tag)."""
    patterns = {p.name: p.pattern for p in reversed(plugins.plugins)}  # (the first of a name wins)
    found = []
    for node in nodes:
        op = next((op for n, op in _custom_ops([node], plugins)), None)
        tag = next((e.value for e in node.metadata_props if e.key == "surgeon.pattern"), "")
        for table in ((op.draw_inputs if op else None), getattr(patterns.get(tag), "draw_inputs", None)):
            for index, draw in (table or {}).items():
                if index < len(node.input) and node.input[index]:
                    found.append((node.input[index], draw))
    return found


def source(value: str, producer: dict, stops) -> str:
    """Where ``value`` comes from through ops that change only its shape or type: a value of
    ``stops``, or the first one computed otherwise."""
    while value and value not in stops and value in producer:
        step = producer[value]
        if step.domain not in ("", "ai.onnx") or step.op_type not in _PASS_THROUGH:
            break
        value = step.input[0]
    return value


def input_drawers(model: ModelProto, plugins) -> dict[str, Callable]:
    """``{model input name: draw(shape, dtype, rng)}`` for the custom nodes of ``model`` and the
    nodes patterns wrote."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    inputs = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    found: dict[str, Callable] = {}
    for value, draw in declared_draws(graph.node, plugins):
        value = source(value, producer, inputs)
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
    for _, op in _custom_ops(graph.node, plugins):
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

