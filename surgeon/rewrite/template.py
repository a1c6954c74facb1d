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
from typing import Any, Callable, Iterator

import numpy as np

from ..graph import Node
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


@dataclass(frozen=True)
class _State:
    """Bindings so far; copied on every change so backtracking needs no undo."""

    values: tuple = ()  # (variable name, value name)
    nodes: tuple = ()  # (id of template node, graph Node)
    notes: tuple = ()  # chains matched in another grouping than the template's, in words

    def value(self, name: str) -> str | None:
        return next((v for k, v in self.values if k == name), None)

    def node(self, tnode: _OpNode) -> Node | None:
        return next((n for k, n in self.nodes if k == id(tnode)), None)

    def uses(self, node: Node) -> bool:
        return any(n is node for _, n in self.nodes)


class _Matcher:
    def __init__(self, template: Template, ctx, regroup: bool = True):
        self.template = template
        self.ctx = ctx
        self.chains = template.chains if regroup else {}
        self.best: tuple[int, str] = (-1, "")  # the failure that got furthest, for the tracer

    def fail(self, state: _State, reason: str) -> Iterator[_State]:
        if len(state.nodes) > self.best[0]:
            self.best = (len(state.nodes), reason)
        return iter(())

    def value(self, tv: _Value, value: str, state: _State) -> Iterator[_State]:
        if tv.var is not None:
            bound = state.value(tv.var)
            if bound is not None:
                if bound != value:
                    return self.fail(state, f"{tv.var} is {bound!r} in one place and {value!r} in another")
                return iter((state,))
            if tv.const is not None and not tv.const.accepts(self.ctx.constant(value)):
                return self.fail(state, f"{tv.var}: {value!r} is not a constant {tv.const!r}")
            return iter((_State(state.values + ((tv.var, value),), state.nodes, state.notes),))
        if tv.producer is None:
            if not tv.const.accepts(self.ctx.constant(value)):
                return self.fail(state, f"{value!r} is not a constant {tv.const!r}")
            return iter((state,))
        return self.op_output(tv, value, state)

    def op_output(self, tv: _Value, value: str, state: _State) -> Iterator[_State]:
        tnode = tv.producer
        node = self.ctx.producer(value)
        if node is None:
            return self.fail(state, f"expected {tnode.op_type} to compute {value!r}, but it is an input or constant")
        if tv.index >= len(node.outputs) or node.outputs[tv.index] != value:
            return self.fail(state, f"{value!r} is not output {tv.index} of {node.label}")
        known = state.node(tnode)
        if known is not None:
            return iter((state,)) if known is node else self.fail(state, f"{node.label} is not {known.label}")
        if state.uses(node):
            return self.fail(state, f"{node.label} would stand for two template ops")
        reason = self.node_mismatch(tnode, node)
        if reason:
            return self.fail(state, f"{node.label}: {reason}")
        state = _State(state.values, state.nodes + ((id(tnode), node),), state.notes)
        chain = self.chains.get(id(tnode))
        if chain is not None:
            return self.chain(chain, node, state)
        return self.inputs(tnode, node, state)

    def node_mismatch(self, tnode: _OpNode, node: Node) -> str | None:
        if not node.is_op(tnode.op_type, tnode.domain):
            want = f"{tnode.domain}::{tnode.op_type}" if tnode.domain else tnode.op_type
            return f"expected {want}"
        actual = _trimmed(node.inputs)
        given = _trimmed(tnode.inputs)
        if len(actual) > len(given) and not tnode.allow_other_inputs:
            return f"has {len(actual)} inputs, the template gives {len(given)}"
        if len(tnode.outputs) > len(node.outputs):
            return f"has {len(node.outputs)} outputs, the template needs {len(tnode.outputs)}"
        for key, expected in tnode.attrs.items():
            actual_value = node.attrs.get(key, _MISSING)
            if actual_value is _MISSING:
                actual_value = _schema_default(node, key, self.ctx)
            if not _attr_matches(expected, actual_value):
                return f"attribute {key}={_show(actual_value)}, the template wants {_show(expected)}"
        if not tnode.allow_other_attributes:
            extra = set(node.attrs) - set(tnode.attrs)
            if extra:
                return f"has attribute(s) {sorted(extra)} the template does not allow"
        return None

    def inputs(self, tnode: _OpNode, node: Node, state: _State) -> Iterator[_State]:
        given = list(tnode.inputs)
        actual = node.inputs + [""] * max(0, len(given) - len(node.inputs))
        n = len(given)
        orders = [tuple(range(n))]
        if tnode.op_type in COMMUTATIVE and not tnode.domain and 2 <= n <= _MAX_PERMUTED_INPUTS:
            orders = list(dict.fromkeys(itertools.permutations(range(n))))
        for order in orders:
            yield from self.pairs([(given[k], actual[i]) for i, k in enumerate(order)], state)

    def chain(self, chain: _Chain, node: Node, state: _State) -> Iterator[_State]:
        """The graph's chain at ``node`` cut into as many operands as the template's, in every
        grouping, each operand matched to a template operand in every order. Groupings that
        take no product something else reads come first (one that does is the engine's to
        refuse, with the reader named)."""
        m = len(chain.operands)
        cuts = []
        for left, right in itertools.product(self._splits(node.inputs[0], chain.op_type, m - 1),
                                             self._splits(node.inputs[1], chain.op_type, m - 1)):
            if len(left[0]) + len(right[0]) == m:
                nodes = [node] + left[1] + right[1]
                shared = sum(self._shared(n.outputs[0]) for n in nodes[1:])
                cuts.append((shared, left[0] + right[0], nodes, (left[2], right[2])))
        if not cuts:
            self.fail(state, f"{node.label}: its {chain.op_type} chain has no grouping into {m} operands")
        for _, values, nodes, tree in sorted(cuts, key=lambda cut: cut[0]):
            if any(state.uses(n) for n in nodes[1:]):
                continue
            inner = state.nodes + tuple((id(t), n) for t, n in zip(chain.interior[1:], nodes[1:]))
            start = _State(state.values, inner, state.notes)
            for assigned, done in self._assign(chain.operands, values, start):
                note = self._regrouped(chain, tree, values, assigned)
                yield done if note is None else _State(done.values, done.nodes, done.notes + (note,))

    def _shared(self, value: str) -> bool:
        return self.ctx.is_graph_output(value) or len(self.ctx.consumers(value)) != 1

    def _splits(self, value: str, op_type: str, most: int) -> list:
        """Ways ``value`` can stand in a chain: as one operand, or (when a node of the same op
        computes it) as the operands of that node, recursively; each (values, nodes, tree), at
        most ``most`` values."""
        options = [([value], [], 0)]
        node = self.ctx.producer(value)
        if most < 2 or node is None or not node.is_op(op_type) or len(node.inputs) != 2 or not all(node.inputs):
            return options
        for left in self._splits(node.inputs[0], op_type, most - 1):
            for right in self._splits(node.inputs[1], op_type, most - len(left[0])):
                options.append((left[0] + right[0], [node] + left[1] + right[1], (left[2], right[2])))
        return options

    def _assign(self, operands: list, values: list[str], state: _State, taken: tuple = ()):
        """Every matching of the template operands to the graph's, one to one: (the graph
        operand each template operand took, the state)."""
        if len(taken) == len(operands):
            yield taken, state
            return
        tv = operands[len(taken)]
        for i, value in enumerate(values):
            if i in taken:
                continue
            for next_state in self.value(tv, value, state):
                yield from self._assign(operands, values, next_state, taken + (i,))

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

    def pairs(self, pairs: list, state: _State) -> Iterator[_State]:
        if not pairs:
            yield state
            return
        (tv, value), rest = pairs[0], pairs[1:]
        if tv is None:
            if value:
                self.fail(state, f"input {value!r} is present where the template has None")
                return
            yield from self.pairs(rest, state)
            return
        if not value:
            self.fail(state, f"an input the template needs ({tv!r}) is absent")
            return
        for next_state in self.value(tv, value, state):
            yield from self.pairs(rest, next_state)


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


def _tracer(ctx) -> Callable[[str], None] | None:
    option = ctx.options.get("trace") if ctx is not None and hasattr(ctx, "options") else None
    if isinstance(option, list):
        return option.append
    if option or os.environ.get("SURGEON_TRACE", "") not in ("", "0"):
        return lambda line: print(line, file=sys.stderr)
    return None


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
    matcher = _Matcher(template, ctx, getattr(pattern, "regroup", True))
    state = None
    if first.index < len(node.outputs) and node.outputs[first.index]:
        state = next(iter(matcher.value(first, node.outputs[first.index], _State())), None)
    else:
        matcher.fail(_State(), f"has no output {first.index}")
    log = _tracer(ctx)
    name = getattr(pattern, "name", getattr(fn, "__name__", "template"))
    if state is None:
        if log is not None:
            log(f"[trace] {name}: {node.label}: template did not match: {matcher.best[1]}")
        return None
    if log is not None:
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
                values[tv.name] = graph_node.outputs[tv.index]
    outputs = [by_tnode[id(v.producer)].outputs[v.index] for v in template.outputs]
    nodes = sorted(by_tnode.values(), key=lambda n: n.position)
    return Match(anchor=anchor, nodes=nodes, outputs=outputs, values=values)
