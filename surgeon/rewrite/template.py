"""Patterns written as small functions over ``op.X(...)``, matched from the last op backwards.

A template is traced once with symbolic values into a tiny DAG; matching starts at the anchor
node (the template's last op) and walks back through ``ctx.producer``::

    @staticmethod
    def template(op, x, flow, base=Const()):
        grid = op.Add(base, op.Transpose(flow, perm=[0, 2, 3, 1]))
        return op.GridSample(x, grid, _name="sampler")

- Parameters (after ``op``) are variables: they bind any value, the same value every time
  they are used. A parameter whose default is ``Const()`` only binds values known before run
  time (``ctx.constant`` is not None); ``Const(2.0)`` also requires that value. Numbers, lists
  and arrays written inline (``op.Mul(x, 2.0)``) are anonymous constants.
- Keyword arguments are attributes the node must have (ints, floats with a tolerance, strings,
  lists, arrays, or a predicate ``lambda value: ...``); an absent attribute is read as the
  op schema's default.
- ``_name="sampler"`` puts the matched node in ``match.values["sampler"]``; ``_outputs=["grid"]``
  (or an int) names the output values (``match.values["grid"]`` is the value name).
- ``_domain="custom.ops"`` matches another domain; ``_allow_other_attributes`` (default True)
  and ``_allow_other_inputs`` (default False: trailing extra inputs are a mismatch).
- Commutative ops (Add, Mul, Max, Min, Sum, Mean, And, Or, Xor, Equal, Bitwise*) match their
  inputs in any order.
- Chains of Mul (or of Add) match in any grouping as well: a template ``(x * 0.5) * y`` matches
  ``x * (0.5 * y)`` and ``(x * y) * 0.5``. The graph's chain is cut into as many operands as the
  template's has (groupings through values nothing else reads first); a template operand that is
  a variable may take a whole sub-product. A chain node the template names (``_name``,
  ``_outputs``), returns or uses twice keeps its grouping. ``Pattern.regroup = False`` turns
  regrouping off for a pattern (the order of a node's own two inputs still does not matter).
- Returning several values makes them ``match.outputs``; the first is the anchor's.

A structural mismatch gives None (not a refusal). With ``SURGEON_TRACE=1`` (or the fuse option
``trace=True``, or ``trace=<list>`` to collect the lines) the matcher says, for every anchor
of the template's op type, how far it got and why it stopped, and for every match that took a
chain in another grouping than the template's, which grouping it took.
"""

from __future__ import annotations

import inspect
import itertools
import numbers
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..graph import Node
from ..graph.node import _DEFAULT_DOMAINS
from .context import MatchContext
from .match import Match

COMMUTATIVE = frozenset({
    "Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor",
})
_MAX_PERMUTED_INPUTS = 4  # 4! orders at most: variadic Sum/Max with more inputs keep theirs
ASSOCIATIVE = {"Mul": "*", "Add": "+"}  # binary ops whose chains match in any grouping
_MAX_CHAIN = 6  # operands of a chain matched in any grouping, at most


class TemplateError(TypeError):
    """The template function itself is malformed (raised while tracing, not while matching)."""


class Const:
    """A template input that only binds values known before run time.

    ``Const()`` accepts any constant; ``Const(value)`` also requires the value (every element
    equal to a scalar, or an array of the same shape), compared with ``rtol``/``atol``.
    Use it as a parameter default (``base=Const()``, bound by name) or inline.
    """

    def __init__(self, value: Any = None, *, rtol: float = 1e-6, atol: float = 0.0):
        self.value = None if value is None else np.asarray(value)
        self.rtol, self.atol = rtol, atol

    def accepts(self, array: np.ndarray | None) -> bool:
        if array is None:
            return False
        if self.value is None:
            return True
        actual = np.asarray(array)
        if self.value.ndim and actual.shape != self.value.shape:
            return False
        if actual.dtype.kind not in "biuf" or self.value.dtype.kind not in "biuf":
            return bool(np.all(actual == self.value))
        if actual.size == 1 and self.value.size == 1:  # the common case, without numpy's machinery
            a, b = float(actual.reshape(())), float(self.value.reshape(()))
            return a == b or abs(a - b) <= self.atol + self.rtol * abs(b)  # a == b: equal infinities
        return bool(np.allclose(actual, self.value, rtol=self.rtol, atol=self.atol))

    def __repr__(self) -> str:
        return "Const()" if self.value is None else f"Const({self.value.tolist()!r})"


# -- the traced template ------------------------------------------------------------------------


class _Value:
    """A value of the traced template: a variable, an anonymous constant, or an op's output."""

    def __init__(self, *, var: str | None = None, const: Const | None = None,
                 producer: "_OpNode | None" = None, index: int = 0, name: str | None = None):
        self.var, self.const, self.producer, self.index, self.name = var, const, producer, index, name

    def __repr__(self) -> str:
        if self.var:
            return self.var
        if self.producer is not None:
            return f"{self.producer.op_type}[{self.index}]"
        return repr(self.const)


@dataclass(eq=False)
class _OpNode:
    op_type: str
    domain: str
    inputs: list  # _Value or None (an absent optional input)
    attrs: dict
    name: str | None
    allow_other_attributes: bool
    allow_other_inputs: bool
    outputs: list = field(default_factory=list)
    given: int = 0  # inputs, trailing absent ones not counted
    orders: list = field(default_factory=list)  # the inputs in each order to try (commutative ops: several)

    def __post_init__(self) -> None:
        self.given = len(_trimmed(self.inputs))
        n = len(self.inputs)
        if self.op_type in COMMUTATIVE and not self.domain and 2 <= n <= _MAX_PERMUTED_INPUTS:
            orders = list(dict.fromkeys(itertools.permutations(range(n))))
        else:
            orders = [tuple(range(n))]
        self.orders = [[self.inputs[k] for k in order] for order in orders]


@dataclass
class Template:
    """The DAG a template function traces to: its returned values and its variables."""

    outputs: list
    variables: dict  # name -> Const or None
    nodes: list
    chains: dict = field(default_factory=dict)  # id(chain top node) -> _Chain


    @property
    def anchor(self) -> _OpNode:
        return self.outputs[0].producer


class OpBuilder:
    """The ``op`` a template function receives: ``op.Add(a, b)``, ``op.Transpose(x, perm=...)``."""

    def __init__(self):
        self.nodes: list[_OpNode] = []

    def __getattr__(self, op_type: str) -> Callable:
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        return lambda *inputs, **kwargs: self._call(op_type, inputs, kwargs)

    def _call(self, op_type, inputs, kwargs):
        special = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith("_")}
        unknown = set(special) - {"_domain", "_name", "_outputs", "_allow_other_attributes", "_allow_other_inputs"}
        if unknown:
            raise TemplateError(f"op.{op_type}: unknown option(s) {sorted(unknown)}")
        outputs = special.get("_outputs", 1)
        names = [None] * outputs if isinstance(outputs, int) else list(outputs)
        domain = special.get("_domain", "") or ""
        node = _OpNode(op_type, "" if domain == "ai.onnx" else domain, [_as_value(v, op_type) for v in inputs],
                       kwargs, special.get("_name"), special.get("_allow_other_attributes", True),
                       special.get("_allow_other_inputs", False))
        node.outputs = [_Value(producer=node, index=k, name=n) for k, n in enumerate(names)]
        self.nodes.append(node)
        return node.outputs[0] if len(node.outputs) == 1 else tuple(node.outputs)


def _as_value(obj, op_type: str):
    if obj is None or isinstance(obj, _Value):
        return obj
    if isinstance(obj, Const):
        return _Value(const=obj)
    if isinstance(obj, (numbers.Number, list, tuple, np.ndarray, np.generic)):
        return _Value(const=Const(obj))
    raise TemplateError(f"op.{op_type}: input {obj!r} is not a template value, a Const or a number")


_TRACED: dict[tuple, tuple[Template, Any]] = {}


def trace(fn: Callable) -> Template:
    """Trace a template function (cached): parameters after ``op`` become variables."""
    key = (getattr(fn, "__func__", fn), id(getattr(fn, "__self__", None)))
    cached = _TRACED.get(key)
    if cached is not None:
        return cached[0]
    params = list(inspect.signature(fn).parameters.values())[1:]  # the first is ``op``
    variables = {p.name: p.default if isinstance(p.default, Const) else None for p in params}
    builder = OpBuilder()
    result = fn(builder, *[_Value(var=p.name, const=variables[p.name]) for p in params])
    returned = list(result) if isinstance(result, (tuple, list)) else [result]
    if not returned or not all(isinstance(v, _Value) and v.producer is not None for v in returned):
        raise TemplateError("a template must return the output(s) of op calls")
    reachable = _reachable(returned[0].producer)
    for v in returned[1:]:
        if id(v.producer) not in reachable:
            raise TemplateError(f"returned value {v!r} is not computed on the way back from the first one")
    template = Template(returned, variables, builder.nodes, _chains(builder.nodes, returned))
    _TRACED[key] = (template, getattr(fn, "__self__", None))  # keep the owner alive: ids stay unique
    return template


@dataclass
class _Chain:
    """A template chain of one associative op: its operands, the op nodes between them (the top
    one first) and its grouping (nested pairs of operand indices)."""

    op_type: str
    operands: list  # _Value
    interior: list  # _OpNode, the top first
    grouping: Any
    selective: list = field(default_factory=list)  # operand indexes: ops, then constants, then variables

    def __post_init__(self) -> None:
        rank = lambda tv: 0 if tv.producer is not None else 1 if tv.var is None else 2 if tv.const else 3  # noqa: E731
        self.selective = sorted(range(len(self.operands)), key=lambda j: rank(self.operands[j]))


def _chains(nodes: list, returned: list) -> dict:
    """The chains of the traced template, keyed by their top node. A Mul (Add) whose output only
    its parent Mul (Add) reads, and which carries no name, joins its parent's chain."""
    uses: dict[int, int] = {}
    for node in nodes:
        for v in node.inputs:
            if v is not None:
                uses[id(v)] = uses.get(id(v), 0) + 1
    pinned = {id(v) for v in returned}

    def joins(v, op_type) -> bool:
        p = v.producer if v is not None else None
        return (p is not None and p.op_type == op_type and not p.domain and len(p.inputs) == 2 and len(p.outputs) == 1
                and uses.get(id(v), 0) == 1 and id(v) not in pinned and not p.name and not v.name
                and not p.attrs and None not in p.inputs)

    chains = {}
    joined = {id(v.producer) for n in nodes if n.op_type in ASSOCIATIVE for v in n.inputs if joins(v, n.op_type)}
    for node in nodes:
        if node.op_type not in ASSOCIATIVE or node.domain or len(node.inputs) != 2 or None in node.inputs \
                or id(node) in joined:
            continue
        operands, interior = [], []

        def walk(n):
            interior.append(n)
            parts = []
            for v in n.inputs:
                if joins(v, node.op_type):
                    parts.append(walk(v.producer))
                else:
                    operands.append(v)
                    parts.append(len(operands) - 1)
            return tuple(parts)

        grouping = walk(node)
        if 2 < len(operands) <= _MAX_CHAIN:
            chains[id(node)] = _Chain(node.op_type, operands, interior, grouping)
    return chains


def _reachable(start: _OpNode) -> set[int]:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(v.producer for v in node.inputs if v is not None and v.producer is not None)
    return seen


# -- matching ---------------------------------------------------------------------------------


class _State:
    """Bindings so far: ``values`` (variable name -> value name), ``nodes`` (id of template node
    -> graph Node), ``used`` (ids of the graph nodes bound), ``notes`` (chains matched in
    another grouping than the template's, in words). One per match, changed in place: a step
    binds, goes on, and takes its binding back when what follows fails."""

    __slots__ = ("values", "nodes", "used", "notes")

    def __init__(self):
        self.values: dict[str, str] = {}
        self.nodes: dict[int, Node] = {}
        self.used: set[int] = set()
        self.notes: list[str] = []

    def value(self, name: str) -> str | None:
        return self.values.get(name)

    def node(self, tnode: _OpNode) -> Node | None:
        return self.nodes.get(id(tnode))

    def uses(self, node: Node) -> bool:
        return id(node) in self.used


class _Matcher:
    """Depth-first search over the template from its anchor, in continuation-passing style: a
    step checks, binds, calls ``k`` (the rest of the match) and returns what it returns, the
    state once everything matched or None; on None it unbinds and tries its next choice. The
    choices come in a fixed order (inputs left to right, commutative orders, chain groupings,
    operand assignments), so the first match found is always the same one."""

    def __init__(self, template: Template, ctx, regroup: bool = True, tracing: bool = False):
        self.template = template
        self.ctx = ctx
        self.producer = ctx.producer
        if getattr(type(ctx), "producer", None) is MatchContext.producer:  # the index's own lookup, one call less per step
            self.producer = ctx._index.producer.get
        self.constant = ctx.constant
        self.accepted = _pass_memo(ctx, "_template_accepts")
        self.chains = template.chains if regroup else {}
        self.tracing = tracing  # the trace's words (why it failed, how a chain was regrouped) only then
        self.state = _State()
        self.best: tuple[int, Any] = (-1, "")  # the failure that got furthest, for the tracer

    def fail(self, reason) -> None:
        """``reason``: a str, or a function giving one (formatted only when the trace shows it)."""
        if len(self.state.nodes) > self.best[0]:
            self.best = (len(self.state.nodes), reason)
        return None

    def reason(self) -> str:
        reason = self.best[1]
        return reason() if callable(reason) else reason

    def value(self, tv: _Value, value: str, k: Callable):
        var = tv.var
        if var is not None:
            values = self.state.values
            bound = values.get(var)
            if bound is not None:
                if bound != value:
                    return self.fail(lambda: f"{var} is {bound!r} in one place and {value!r} in another")
                return k()
            if tv.const is not None and not self.accepts(tv.const, value):
                return self.fail(lambda: f"{var}: {value!r} is not a constant {tv.const!r}")
            values[var] = value
            result = k()
            if result is None:
                del values[var]
            return result
        if tv.producer is None:
            if not self.accepts(tv.const, value):
                return self.fail(lambda: f"{value!r} is not a constant {tv.const!r}")
            return k()
        return self.op_output(tv, value, k)

    def op_output(self, tv: _Value, value: str, k: Callable):
        tnode = tv.producer
        node = self.producer(value)
        if node is None:
            return self.fail(lambda: f"expected {tnode.op_type} to compute {value!r}, but it is an input or constant")
        outputs = node.outs
        if tv.index >= len(outputs) or outputs[tv.index] != value:
            return self.fail(lambda: f"{value!r} is not output {tv.index} of {node.label}")
        state = self.state
        key = id(tnode)
        known = state.nodes.get(key)
        if known is not None:
            return k() if known is node else self.fail(lambda: f"{node.label} is not {known.label}")
        if id(node) in state.used:
            return self.fail(lambda: f"{node.label} would stand for two template ops")
        actual = self.node_mismatch(tnode, node)
        if actual is None:
            return self.fail(lambda: f"{node.label}: {self._mismatch_reason(tnode, node)}")
        state.nodes[key] = node
        state.used.add(id(node))
        chain = self.chains.get(key)
        if chain is not None:
            result = self.chain(chain, node, k)
        else:
            result = self.inputs(tnode, actual, k)
        if result is None:
            del state.nodes[key]
            state.used.discard(id(node))
        return result

    def node_mismatch(self, tnode: _OpNode, node: Node) -> list | None:
        """The node's inputs when it fits ``tnode`` (op, inputs, outputs, attributes), else None
        (``_mismatch_reason`` says why)."""
        proto = node.proto
        if proto.op_type != tnode.op_type:
            return None
        domain = proto.domain
        if (domain not in _DEFAULT_DOMAINS) if tnode.domain in _DEFAULT_DOMAINS else domain != tnode.domain:
            return None
        actual = node.ins
        n = len(actual)
        while n and not actual[n - 1]:
            n -= 1
        if n > tnode.given and not tnode.allow_other_inputs:
            return None
        if len(tnode.outputs) > 1 and len(tnode.outputs) > len(node.outs):
            return None
        if tnode.attrs:
            attrs = node.attrs
            for key, expected in tnode.attrs.items():
                actual_value = attrs.get(key, _MISSING)
                if actual_value is _MISSING:
                    actual_value = _schema_default(node, key, self.ctx)
                if not _attr_matches(expected, actual_value):
                    return None
        if not tnode.allow_other_attributes and set(node.attrs) - set(tnode.attrs):
            return None
        return actual

    def _mismatch_reason(self, tnode: _OpNode, node: Node) -> str:
        """Why ``node_mismatch`` said no, in words (for the trace)."""
        if not node.is_op(tnode.op_type, tnode.domain):
            want = f"{tnode.domain}::{tnode.op_type}" if tnode.domain else tnode.op_type
            return f"expected {want}"
        actual = _trimmed(node.inputs)
        if len(actual) > tnode.given and not tnode.allow_other_inputs:
            return f"has {len(actual)} inputs, the template gives {tnode.given}"
        if len(tnode.outputs) > len(node.outputs):
            return f"has {len(node.outputs)} outputs, the template needs {len(tnode.outputs)}"
        for key, expected in tnode.attrs.items():
            actual_value = node.attrs.get(key, _MISSING)
            if actual_value is _MISSING:
                actual_value = _schema_default(node, key, self.ctx)
            if not _attr_matches(expected, actual_value):
                return f"attribute {key}={_show(actual_value)}, the template wants {_show(expected)}"
        extra = set(node.attrs) - set(tnode.attrs)
        return f"has attribute(s) {sorted(extra)} the template does not allow"

    def inputs(self, tnode: _OpNode, actual: list, k: Callable):
        """The node's inputs against the template's, in each order the op allows."""
        if len(actual) < len(tnode.inputs):
            actual = actual + ("",) * (len(tnode.inputs) - len(actual))
        for given in tnode.orders:
            result = self.pairs(given, actual, 0, k)
            if result is not None:
                return result
        return None

    def pairs(self, given: list, actual: list, i: int, k: Callable):
        """Template values ``given[i:]`` against the graph's ``actual[i:]``, left to right."""
        n = len(given)
        while i < n:
            tv, value = given[i], actual[i]
            if tv is None:
                if value:
                    return self.fail(lambda: f"input {value!r} is present where the template has None")
                i += 1
                continue
            if not value:
                return self.fail(lambda: f"an input the template needs ({tv!r}) is absent")
            j = i + 1
            if j == n:
                return self.value(tv, value, k)
            return self.value(tv, value, lambda: self.pairs(given, actual, j, k))
        return k()

    def chain(self, chain: _Chain, node: Node, k: Callable):
        """The graph's chain at ``node`` cut into as many operands as the template's, in every
        grouping, each operand matched to a template operand in every order. Groupings that
        take no product something else reads come first (one that does is the engine's to
        refuse, with the reader named)."""
        m = len(chain.operands)
        inputs = node.ins
        cuts = []
        for left, right in itertools.product(self._splits(inputs[0], chain.op_type, m - 1),
                                             self._splits(inputs[1], chain.op_type, m - 1)):
            if len(left[0]) + len(right[0]) == m:
                nodes = [node] + left[1] + right[1]
                shared = sum(self._shared(n.outs[0]) for n in nodes[1:])
                cuts.append((shared, left[0] + right[0], nodes, (left[2], right[2])))
        if not cuts:
            return self.fail(lambda: f"{node.label}: its {chain.op_type} chain has no grouping into {m} operands")
        if len(cuts) > 1:
            cuts.sort(key=lambda cut: cut[0])
        state = self.state
        for _, values, nodes, tree in cuts:
            if any(id(n) in state.used for n in nodes[1:]):
                continue
            # Which graph operands each template operand could take at all, whatever is bound
            # (a bit per graph operand): a grouping no one-to-one assignment fits is skipped
            # without matching into any operand, and so is every assignment that leaves an
            # operand nothing it could take. Only what cannot match is skipped, so the first
            # match found is the same; the trace (the furthest failure) sees every attempt.
            could = None if self.tracing else self._coulds(chain, values)
            if could is not None and not _assignable(could, 0, 0):
                continue
            inner = list(zip(chain.interior[1:], nodes[1:]))
            for tnode, graph_node in inner:
                state.nodes[id(tnode)] = graph_node
                state.used.add(id(graph_node))
            result = self.assign(chain.operands, values, (), 0, could,
                                 lambda taken: self._grouped(chain, tree, values, taken, k))
            if result is not None:
                return result
            for tnode, graph_node in inner:
                del state.nodes[id(tnode)]
                state.used.discard(id(graph_node))
        return None

    def _grouped(self, chain: _Chain, tree, values: list[str], taken: tuple, k: Callable):
        """A chain matched: note its grouping when the trace shows it, and go on."""
        note = self._regrouped(chain, tree, values, taken) if self.tracing else None
        if note is None:
            return k()
        notes = self.state.notes
        notes.append(note)
        result = k()
        if result is None:
            notes.pop()
        return result

    def _shared(self, value: str) -> bool:
        return self.ctx.is_graph_output(value) or len(self.ctx.consumers(value)) != 1

    def _splits(self, value: str, op_type: str, most: int) -> list:
        """Ways ``value`` can stand in a chain: as one operand, or (when a node of the same op
        computes it) as the operands of that node, recursively; each (values, nodes, tree), at
        most ``most`` values."""
        options = [([value], [], 0)]
        node = self.producer(value)
        if most < 2 or node is None or not node.is_op(op_type):
            return options
        inputs = node.ins
        if len(inputs) != 2 or not inputs[0] or not inputs[1]:
            return options
        for left in self._splits(inputs[0], op_type, most - 1):
            for right in self._splits(inputs[1], op_type, most - len(left[0])):
                options.append((left[0] + right[0], [node] + left[1] + right[1], (left[2], right[2])))
        return options

    def assign(self, operands: list, values: list[str], taken: tuple, mask: int, could: list | None,
               k: Callable):
        """The template operands matched to the graph's one to one, every way in turn; ``k``
        gets the graph operand each template operand took (``taken``; ``mask``: the same as
        bits). ``could``: for each template operand, the graph operands it could take, as bits
        (None: try every one)."""
        j = len(taken)
        if j == len(operands):
            return k(taken)
        tv = operands[j]
        for i, value in enumerate(values):
            bit = 1 << i
            if mask & bit:
                continue
            if could is not None and (not could[j] & bit or not _assignable(could, j + 1, mask | bit)):
                continue
            result = self.value(tv, value, lambda: self.assign(operands, values, taken + (i,), mask | bit, could, k))
            if result is not None:
                return result
        return None

    def _coulds(self, chain: _Chain, values: list[str]) -> list[int]:
        """``_could`` for every template operand of ``chain``, the cheapest and most selective
        first (ops: a producer's type; then constants, which may fold): all zero as soon as one
        operand could take nothing."""
        could = [0] * len(chain.operands)
        for j in chain.selective:
            could[j] = self._could(chain.operands[j], values)
            if not could[j]:
                return [0] * len(could)
        return could

    def _could(self, tv: _Value, values: list[str]) -> int:
        """The graph operands (bit i: ``values[i]``) template operand ``tv`` could take in some
        state: ``value`` would fail on the others whatever is bound."""
        if tv.var is not None and tv.const is None:
            return (1 << len(values)) - 1
        found = 0
        for i, value in enumerate(values):
            if tv.producer is None:  # a constant, named (x=Const(...)) or not
                if self.accepts(tv.const, value):
                    found |= 1 << i
                continue
            node = self.producer(value)
            if node is None:
                continue
            outputs = node.outs
            if tv.index < len(outputs) and outputs[tv.index] == value and self.node_mismatch(tv.producer, node) is not None:
                found |= 1 << i
        return found

    def accepts(self, const: Const, value: str) -> bool:
        """``const.accepts(ctx.constant(value))``, remembered for the pass (a value's constant
        does not change while matching; a model's few shared constants are asked thousands of
        times)."""
        key = (id(const), value)
        known = self.accepted.get(key)
        if known is None:
            known = self.accepted[key] = const.accepts(self.constant(value))
        return known

    @staticmethod
    def _regrouped(chain: _Chain, tree, values: list[str], assigned: tuple) -> str | None:
        """The grouping the graph's chain has, in words, when it is not the template's (an
        order swapped within one node is not a regrouping)."""
        counter = itertools.count()
        leaves = []

        def number(t):
            if t == 0:
                leaves.append(next(counter))
                return leaves[-1]
            return (number(t[0]), number(t[1]))

        numbered = number(tree)
        operand_of = {graph_index: k for k, graph_index in enumerate(assigned)}
        mapped = _map_tree(numbered, lambda i: operand_of[i])
        if _canonical(mapped) == _canonical(chain.grouping):
            return None
        sign = f" {ASSOCIATIVE[chain.op_type]} "
        show = lambda t: _show_tree(t, lambda k: _label(chain.operands[k]), sign)  # noqa: E731
        return f"{chain.op_type} chain matched as {show(mapped)} (the template groups it {show(chain.grouping)})"


def _assignable(could: list, j: int, mask: int) -> bool:
    """Whether template operands ``j`` on can each take a graph operand of their own from
    ``could`` (bits), those in ``mask`` being taken (six operands at most: small)."""
    if j == len(could):
        return True
    free = could[j] & ~mask
    while free:
        bit = free & -free
        if _assignable(could, j + 1, mask | bit):
            return True
        free ^= bit
    return False


def _label(tv: _Value) -> str:
    """A template operand as the trace shows it: x, 0.5, Add(...)."""
    if tv.var:
        return tv.var
    if tv.producer is not None:
        return f"{tv.producer.op_type}(...)"
    value = tv.const.value
    return "Const()" if value is None else f"{value.item():g}" if value.size == 1 else f"Const{list(value.shape)}"


def _map_tree(tree, fn):
    return fn(tree) if isinstance(tree, int) else tuple(_map_tree(t, fn) for t in tree)


def _canonical(tree):
    """A grouping with the order within each pair forgotten."""
    if isinstance(tree, int):
        return (tree,)
    return tuple(sorted((_canonical(t) for t in tree), key=repr))


def _show_tree(tree, label, sign: str, top: bool = True) -> str:
    if isinstance(tree, int):
        return label(tree)
    text = sign.join(_show_tree(t, label, sign, False) for t in tree)
    return text if top else f"({text})"


_MISSING = object()


def _trimmed(items: list) -> list:
    items = list(items)
    while items and not items[-1]:
        items.pop()
    return items


def _schema_default(node: Node, key: str, ctx) -> Any:
    """The value an absent attribute stands for, from the op schema of the model's opset."""
    try:
        import onnx.defs
        from onnx import helper

        opset = (ctx.opset(node.domain) if ctx is not None else None) or onnx.defs.onnx_opset_version()
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
        attr = schema.attributes.get(key)
        if attr is None or not attr.default_value.name:
            return _MISSING
        value = helper.get_attribute_value(attr.default_value)
        return value.decode() if isinstance(value, bytes) else value
    except Exception:  # unknown op or domain: no default to fall back on
        return _MISSING


def _attr_matches(expected: Any, actual: Any) -> bool:
    if actual is _MISSING:
        return False
    if callable(expected) and not isinstance(expected, (np.ndarray, type)):
        return bool(expected(actual))
    if isinstance(actual, bytes):
        actual = actual.decode("utf-8", "replace")
    if isinstance(expected, bytes):
        expected = expected.decode("utf-8", "replace")
    if isinstance(expected, str) or isinstance(actual, str):
        return expected == actual
    if isinstance(expected, (list, tuple)) or isinstance(actual, (list, tuple)):
        if not isinstance(expected, (list, tuple)) or not isinstance(actual, (list, tuple)):
            return False
        return len(expected) == len(actual) and all(_attr_matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, np.ndarray) or isinstance(actual, np.ndarray):
        e, a = np.asarray(expected), np.asarray(actual)
        return e.shape == a.shape and bool(np.allclose(a, e, rtol=1e-6, atol=0))
    if isinstance(expected, float) or isinstance(actual, float):
        return bool(np.isclose(float(actual), float(expected), rtol=1e-6, atol=1e-12))
    return expected == actual


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    if callable(value) and not isinstance(value, np.ndarray):
        return "(a predicate)"
    return repr(value)


# -- entry point -------------------------------------------------------------------------------


def _pass_memo(ctx, name: str) -> dict:
    """A dict kept on a MatchContext (one per pass, over a graph that does not change while it
    lasts); a fresh one for any other context."""
    if not isinstance(ctx, MatchContext):
        return {}
    memo = ctx.__dict__.get(name)
    if memo is None:
        memo = ctx.__dict__[name] = {}
    return memo


def tracer(ctx) -> Callable[[str], None] | None:
    """Where ``[trace]`` lines go for this context (``SURGEON_TRACE``, ``options["trace"]``), or None."""
    # Asked once per context (a pass), not per anchor: reading the environment costs more than
    # matching a small template.
    cached = getattr(ctx, "_template_tracer", _MISSING) if isinstance(ctx, MatchContext) else _MISSING
    if cached is not _MISSING:
        return cached
    option = ctx.options.get("trace") if ctx is not None and hasattr(ctx, "options") else None
    if isinstance(option, list):
        found = option.append
    elif option or os.environ.get("SURGEON_TRACE", "") not in ("", "0"):
        found = lambda line: print(line, file=sys.stderr)  # noqa: E731
    else:
        found = None
    if isinstance(ctx, MatchContext):
        ctx._template_tracer = found
    return found


def match_template(pattern, ctx, node: Node) -> Match | None:
    """Match ``pattern.template`` (or a template function) with its last op at ``node``.

    Returns a Match whose ``values`` hold every variable (value name), every ``_name``
    (Node) and every ``_outputs`` name (value name); None when the structure differs.
    """
    fn = getattr(pattern, "template", pattern)
    template = trace(fn)
    anchor = template.anchor
    if not node.is_op(anchor.op_type, anchor.domain):
        return None
    first = template.outputs[0]
    log = tracer(ctx)
    matcher = _Matcher(template, ctx, getattr(pattern, "regroup", True), tracing=log is not None)
    state = None
    outputs = node.outs
    if first.index < len(outputs) and outputs[first.index]:
        state = matcher.value(first, outputs[first.index], lambda: matcher.state)
    else:
        matcher.fail(f"has no output {first.index}")
    if state is None:
        if log is not None:
            name = getattr(pattern, "name", getattr(fn, "__name__", "template"))
            log(f"[trace] {name}: {node.label}: template did not match: {matcher.reason()}")
        return None
    if log is not None:
        name = getattr(pattern, "name", getattr(fn, "__name__", "template"))
        for note in state.notes:
            log(f"[trace] {name}: {node.label}: matched; {note}")
    return _to_match(template, state, node)


def _to_match(template: Template, state: _State, anchor: Node) -> Match:
    by_tnode = dict(state.nodes)
    values: dict[str, Any] = dict(state.values)
    for tnode in template.nodes:
        graph_node = by_tnode.get(id(tnode))
        if graph_node is None:
            continue
        if tnode.name:
            values[tnode.name] = graph_node
        for tv in tnode.outputs:
            if tv.name:
                values[tv.name] = graph_node.outs[tv.index]
    outputs = [by_tnode[id(v.producer)].outs[v.index] for v in template.outputs]
    nodes = sorted(by_tnode.values(), key=lambda n: n.position)
    return Match(anchor=anchor, nodes=nodes, outputs=outputs, values=values)
