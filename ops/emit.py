"""Two ways to write the same standard-ONNX nodes: into the graph being rewritten (``unfuse``,
through surgeon's ``RewriteContext``) or into a model-local function body (``fuse --functions``).

The op builders in ``onnx_grid`` write through either, so an op's standard form and its
function body share one definition. ``op()`` takes plain attribute values (int, float, str,
lists, GraphProto) or ``Ref`` (an attribute of the function being defined).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from onnx import AttributeProto, FunctionProto, GraphProto, TensorProto, ValueInfoProto, helper, numpy_helper

from surgeon import RewriteContext


@dataclass(frozen=True)
class Ref:
    """The value of the enclosing function's attribute ``name`` (a function body only)."""

    name: str
    type: int  # AttributeProto.INT, STRING, INTS


def _attribute(name: str, value) -> AttributeProto:
    if isinstance(value, Ref):
        return AttributeProto(name=name, ref_attr_name=value.name, type=value.type)
    if isinstance(value, (GraphProto, TensorProto)):
        return helper.make_attribute(name, value)
    if isinstance(value, bool) or isinstance(value, (int, np.integer)):
        return helper.make_attribute(name, int(value))
    if isinstance(value, (float, str)):
        return helper.make_attribute(name, value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in value):
        return helper.make_attribute(name, [int(v) for v in value], attr_type=AttributeProto.INTS)
    raise TypeError(f"attribute {name}={value!r}: no ONNX type for it here")


class GraphEmitter:
    """Writes into the graph through a RewriteContext: constants become initializers."""

    def __init__(self, ctx: RewriteContext, hint: str):
        self.ctx = ctx
        self.hint = hint or "unfused"

    def op(self, op_type: str, inputs, out: str | None = None, **attrs) -> str:
        output = out or self.ctx.fresh_name(f"{self.hint}/{op_type}_out")
        self.ctx.add_node_with(op_type, list(inputs), [output], "", f"{self.hint}/{op_type}",
                               [_attribute(k, v) for k, v in attrs.items()])
        return output

    def const(self, values, dtype=np.int64) -> str:
        return self.ctx.add_constant(np.asarray(values, dtype=dtype), f"{self.hint}/const")


class FunctionEmitter:
    """Collects the nodes of a function body (or of an ``If`` branch inside one): constants are
    Constant nodes, names are unique across the body and its branches."""

    def __init__(self, counter=None):
        self.nodes = []
        self._counter = counter if counter is not None else itertools.count()

    def _name(self, hint: str) -> str:
        return f"{hint}_{next(self._counter)}"

    def op(self, op_type: str, inputs, out: str | None = None, **attrs) -> str:
        output = out or self._name(op_type.lower())
        node = helper.make_node(op_type, list(inputs), [output], name=self._name(op_type))
        node.attribute.extend(_attribute(k, v) for k, v in attrs.items())
        self.nodes.append(node)
        return output

    def const(self, values, dtype=np.int64) -> str:
        return self.op("Constant", [], value=numpy_helper.from_array(np.asarray(values, dtype=dtype)))

    def attr(self, kind: str, ref: Ref) -> str:
        """A tensor holding the function attribute ``ref`` (``kind``: value_int, value_ints, ...)."""
        return self.op("Constant", [], **{kind: ref})

    def branch(self) -> "FunctionEmitter":
        """An emitter for an ``If`` branch: it shares the body's names."""
        return FunctionEmitter(self._counter)

    def graph(self, output: str, name: str) -> GraphProto:
        """This emitter's nodes as a branch graph with one (untyped: float or half) output."""
        return helper.make_graph(self.nodes, name, [], [ValueInfoProto(name=output)])

    def function(self, domain: str, name: str, inputs: list[str], outputs: list[str], opset: int,
                 attributes: list[str], defaults: dict) -> FunctionProto:
        """The body as a FunctionProto: ``attributes`` without a default, ``defaults`` declared
        with theirs (surgeon also writes those on every calling node: the reference evaluator
        and the inliners do not apply a function's defaults)."""
        return helper.make_function(domain, name, inputs, outputs, self.nodes, [helper.make_opsetid("", opset)],
                                    attributes=attributes,
                                    attribute_protos=[_attribute(k, v) for k, v in defaults.items()])
