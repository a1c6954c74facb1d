"""Replacements written like templates: ``op.FusedX(a, b, alpha=0.5, _domain="my.ops")``.

A pattern's ``replacement(op, ...)`` receives the match's values by parameter name (template
variables, ``_name`` nodes, ``_outputs`` names) and returns the value(s) standing for the
match's outputs, in order. Attributes take their type from the Python value (bool -> INT 0/1,
int, float, str, lists of them, numpy arrays); inline numbers and arrays become constants. The
returned values are renamed to the match's outputs, which keep the type and shape the model
gave them.
"""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from ..graph.attrs import attributes_from_keywords
from .context import RewriteContext
from .match import Match

_OPTIONS = {"_domain", "_outputs", "_name"}


class ReplacementBuilder:
    """The ``op`` a replacement function receives; each call adds one node."""

    def __init__(self, ctx: RewriteContext):
        self.ctx = ctx

    def __getattr__(self, op_type: str) -> Callable:
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        return lambda *inputs, **kwargs: self._call(op_type, inputs, kwargs)

    def _call(self, op_type: str, inputs, kwargs):
        special = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith("_")}
        unknown = set(special) - _OPTIONS
        if unknown:
            raise TypeError(f"op.{op_type}: unknown option(s) {sorted(unknown)}")
        names = [self._input(v, op_type) for v in inputs]
        attributes = attributes_from_keywords(kwargs)
        count = special.get("_outputs", 1)
        outputs = self.ctx.add_node_with(op_type, names, count, special.get("_domain", ""), special.get("_name"),
                                         attributes)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _input(self, value, op_type: str) -> str:
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, (numbers.Number, np.ndarray, np.generic, list, tuple)):
            array = np.asarray(value)
            if array.dtype == np.float64:
                array = array.astype(np.float32)  # Python floats: the usual float tensor
            return self.ctx.add_constant(array, f"{op_type}_const")
        raise TypeError(f"op.{op_type}: input {value!r} is not a value name, None or a number/array")


def write_replacement(fn: Callable, ctx: RewriteContext, match: Match, parameters: list[str]) -> None:
    """Run ``fn`` and make what it returns produce ``match.outputs``."""
    result = fn(ReplacementBuilder(ctx), **{p: match.values[p] for p in parameters if p in match.values})
    returned = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(returned) != len(match.outputs):
        raise ValueError(f"replacement returned {len(returned)} value(s) for {len(match.outputs)} match output(s)")
    made = {o: n for n in ctx.new_nodes for o in n.proto.output}
    for value, out in zip(returned, match.outputs):
        if not isinstance(value, str):
            raise TypeError(f"replacement returned {value!r}, not a value")
        declared = (ctx.dtype(out), ctx.shape(out))
        if value in made:
            _rename(ctx, value, out)
        else:  # an input passed through: the output still needs a node of its own
            ctx.add_node("Identity", [value], [out])
        if declared[0]:
            ctx.set_shape(out, declared[0], declared[1])


def _rename(ctx: RewriteContext, old: str, new: str) -> None:
    for node in ctx.new_nodes:
        proto = node.proto
        if old in proto.output:
            proto.output[:] = [new if o == old else o for o in proto.output]
        if old in proto.input:
            proto.input[:] = [new if i == old else i for i in proto.input]
        node.forget_io()
    if old in ctx.new_shapes:
        ctx.new_shapes[new] = ctx.new_shapes.pop(old)
