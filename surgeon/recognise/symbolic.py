"""What one element of a region is, for every size: an exact expression, not a sample.

The proof (``prove.py``) settles a region's *form* element by element at one set of dims, and
identification fits the coefficients inside it at the dims it tries. This evaluates the region
once more with nothing concrete: every dim is a symbol ``d<class>``, the output's element is
taken at a generic position (``p<axis>``, ranging over its axis), the variable's elements are
symbols ``v<j>`` (one item, the item the output's first axis names), and every constant is its
exact value. What comes out is a quotient of polynomials (``algebra.Ratio``) a caller compares
with the form it claims, as rational functions: equal there is equal at every size.

Extents and indices are integer expressions (sympy, exact): a flattened position ``p1 * W + p2``
is split back into ``(p1, p2)`` by proving the remainder in range for every size, never by a
probe's value. Comparisons of dims are decided for every dim of at least 2 (a size of 1 is
the identification's, ``small_dims``). Whatever has no exact rule here (a floor, a clamp, a
concatenation along a run-time axis, an op with no rule) ends the evaluation with
``NotExact``: the caller then keeps what the probes found, and says so.

A step that runs only where two extents agree (``Tied``: a broadcast of ``d0 * d1`` against
``20 * d0``, a reshape's element count) holds them equal in every run that succeeds: the
evaluation solves that for one dim (``d1 = 20``) and starts again assuming it (``assumed``), as
the rewrite may (what the original enforces, the rewrite may assume).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import sympy

from .algebra import Bound, Poly, Ratio, positive
from .prove import rule_for
from .symbolic_rules import CONTRIB, RULES
from .symbolic_tensor import LEAST, NotExact, Sym, Tied, constant, dim_symbol, integers, number, same, to_ratio

__all__ = ["NotExact", "Sym", "Evaluation", "Element", "evaluate", "dim_of", "dim_symbol", "region_leaves",
           "integers", "to_ratio", "LEAST"]


class Evaluation:
    """One symbolic evaluation of a region (see the module's text)."""

    def __init__(self, ctx, nodes, values: dict, leaves, rules: dict | None = None, assumed: dict | None = None):
        """``leaves``: value -> ``Sym``, or a function of this evaluation giving them; ``assumed``:
        dim symbol -> the expression every successful run has it equal to (``Tied``)."""
        self.ctx, self.values, self.rules = ctx, values, rules or {}
        self.assumed = dict(assumed or {})
        self.ranges: dict = {}  # position symbol -> its axis's extent
        self.positions: tuple = ()  # the generic element's leading index (``element``)
        self.syms: dict[str, Sym] = dict(leaves(self) if callable(leaves) else leaves)
        if self.assumed:  # the leaves' extents as every successful run has them
            self.syms = {k: Sym(tuple(sympy.sympify(e).subs(self.assumed) for e in v.shape), v.at, v.integer)
                         for k, v in self.syms.items()}
        for node in nodes:
            outs = [o for o in node.outputs if o]
            if outs and all(o in self.syms for o in outs):
                continue
            ins = [self.sym(i) if i else None for i in node.inputs]
            rule = rule_for(node, self.rules, RULES, CONTRIB)
            if rule is None:
                raise NotExact(f"{node.label}: no exact rule for {node.op_type}")
            results = rule(self, node, ins)
            for name, result in zip(outs, results):
                self.syms[name] = _memoised(result)

    def sym(self, name: str) -> Sym:
        if name not in self.syms:
            value = self.ctx.constant(name)
            if value is None:
                raise NotExact(f"the region reads {name!r}, neither a leaf nor a constant")
            self.syms[name] = constant(np.asarray(value))
        return self.syms[name]

    def integer(self, name: str) -> bool:
        value = self.values.get(name)
        return value is not None and np.asarray(value).dtype.kind in "biu"

    def decide(self, value: Ratio) -> bool:
        """A condition that holds or fails for every dim of at least ``LEAST`` (else NotExact)."""
        n = value.number()
        if n is not None:
            return n != 0
        raise NotExact("a condition that depends on the sizes")

    def compare(self, a: Ratio, b: Ratio, op: str) -> bool:
        difference = a - b
        poly = difference.polynomial()
        if poly is None:
            raise NotExact("a comparison of quotients of sizes")
        n = poly.number()
        if n is not None:
            return {"Greater": n > 0, "Less": n < 0, "Equal": n == 0, "GreaterOrEqual": n >= 0,
                    "LessOrEqual": n <= 0}[op]
        least = {s: LEAST for s in poly.symbols() if s.startswith("d")}
        sign = 1 if positive(poly, least) else -1 if positive(-poly, least) else 0
        if sign:  # strictly one side at every dim of at least LEAST
            return {"Greater": sign > 0, "GreaterOrEqual": sign > 0, "Less": sign < 0, "LessOrEqual": sign < 0,
                    "Equal": False}[op]
        raise NotExact(f"a comparison of sizes ({op}) that goes either way")

    def domain(self, names) -> dict:
        """``algebra.Bound`` of each symbol among ``names`` that is a dim or a position."""
        out = {}
        for name in names:
            symbol = dim_symbol(name)
            if symbol in self.ranges:
                extent = sympy.sympify(self.ranges[symbol])
                out[name] = Bound(least=0, position=True, of=str(extent) if extent.is_Symbol else None,
                                  size=int(extent) if extent.is_Integer else None)
            elif name.startswith("d"):
                out[name] = Bound(least=LEAST)
        return out

    def element(self, name: str) -> Element:
        """Every element of ``name`` at a generic position: one ``Ratio`` per index of its trailing
        axes of a numeric extent up to 8 (enumerated), at positions ``p<axis>`` (sympy symbols,
        0 on an axis of extent 1) along the others."""
        sym = self.sym(name)
        positions = []
        enumerate_from = len(sym.shape)
        while enumerate_from > 0 and sym.shape[enumerate_from - 1].is_Integer and \
                int(sym.shape[enumerate_from - 1]) <= 8:
            enumerate_from -= 1
        if all(e.is_Integer for e in sym.shape[1:enumerate_from]):
            raise NotExact("every extent but the first is a number: each probe evaluates every element")
        for axis, extent in enumerate(sym.shape[:enumerate_from]):
            if extent == 1:
                positions.append(sympy.Integer(0))
                continue
            p = dim_symbol(f"p{axis}")
            self.ranges[p] = extent
            positions.append(p)
        self.positions = tuple(positions)
        values = {tail: sym.at(self.positions + tuple(sympy.Integer(t) for t in tail))
                  for tail in np.ndindex(*[int(e) for e in sym.shape[enumerate_from:]])}
        return Element(values, sym.shape, self.positions)


@dataclass
class Element:
    values: dict  # index of the trailing (enumerated) axes -> Ratio
    shape: tuple  # the value's extents (sympy)
    positions: tuple  # the index of the leading axes (sympy symbols, or 0)


def _memoised(sym: Sym) -> Sym:
    seen: dict = {}

    def at(index):
        key = tuple(sympy.expand(i) for i in index)
        if key not in seen:
            seen[key] = sym.at(key)
        return seen[key]

    return Sym(sym.shape, at, sym.integer)


def evaluate(ctx, nodes, values: dict, leaves: dict[str, Sym], output: str, rules: dict | None = None,
             then=None):
    """``output``'s generic ``Element``, or ``NotExact``; ``then(evaluation, element)``, when
    given, runs inside the same guards and its result is returned instead."""
    assumed: dict = {}
    for _ in range(MAX_TIES + 1):
        try:
            return _once(ctx, nodes, values, leaves, output, rules, then, assumed)
        except Tied as tie:
            solved = _solve(tie.a - tie.b)
            if solved is None:
                raise NotExact(str(tie)) from None
            symbol, value = solved
            assumed = {s: sympy.expand(e.subs(symbol, value)) for s, e in assumed.items()}
            assumed[symbol] = value
    raise NotExact(f"more than {MAX_TIES} extents held equal")


MAX_TIES = 4


def _solve(difference):
    """``(dim, expression)`` with ``difference == 0`` exactly when dim equals the expression (a
    number of at least ``LEAST``, or a polynomial in other dims), or None."""
    for symbol in sorted(difference.free_symbols, key=str):
        if not str(symbol).startswith("d"):
            continue
        found = [e for e in sympy.solve(difference, symbol)
                 if e.is_polynomial() and (not e.is_Number or (e.is_Integer and e >= LEAST))]
        if len(found) == 1 and all(str(s).startswith("d") for s in found[0].free_symbols):
            return symbol, sympy.expand(found[0])
    return None


def _once(ctx, nodes, values, leaves, output, rules, then, assumed):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    evaluation = None
    try:
        evaluation = Evaluation(ctx, nodes, values, leaves, rules, assumed)
        element = evaluation.element(output)
        return then(evaluation, element) if then else element
    except (RecursionError, ZeroDivisionError, OverflowError) as exc:
        raise NotExact(f"{type(exc).__name__}") from None
    except (ValueError, IndexError, TypeError, KeyError) as exc:  # a rule meeting a form it was not written for
        raise NotExact(f"{type(exc).__name__}: {exc}") from None
    finally:
        sys.setrecursionlimit(limit)
        if evaluation is not None:  # its tensors' closures hold it: a cycle that would keep the model
            evaluation.syms.clear()
            evaluation.ctx = evaluation.values = None


def dim_of(dims, cls: int, assumed: dict | None = None):
    """A class's symbol: its group's (``DimPlan``), or the value the plan fixes it at, or what
    ``assumed`` holds it equal to."""
    if cls in dims.fixed:
        return sympy.Integer(dims.fixed[cls])
    symbol = dim_symbol(f"d{dims.rep(dims.group_of(cls))}")
    return (assumed or {}).get(symbol, symbol)


def region_leaves(region, symbols, dims, values: dict, evaluation) -> dict[str, Sym]:
    """The leaves of a cut region (``Region``): its ``Shape``/``Size`` of run-time tensors, its
    folded shapes, its run-time int tensors read as sizes (each element its class's symbol) and
    its variable, whose element ``j`` of the item the output's first position names is ``v<j>``
    (elements every run holds, ``region.fixed``, are those values). ``evaluation``: the one
    that reads them (the output's positions are known only once it asks for them)."""
    def extents(value):
        return tuple(sympy.Integer(d) if isinstance(d, int) else dim_of(dims, d.cls, evaluation.assumed)
                     for d in symbols.owners[value])

    def unreadable(index):
        raise NotExact("the region reads the data of a tensor it only measures")

    leaves: dict[str, Sym] = {}
    for node in region.shapes:
        if node.inputs[0] in symbols.owners:
            leaves[node.outputs[0]] = RULES[node.op_type](None, node, [Sym(extents(node.inputs[0]), unreadable)])[0]
    for node in region.folded:
        for out in node.outputs:
            if out in values:
                leaves[out] = constant(np.asarray(values[out]))
    for name, elements in symbols.elements.items():
        held = [dim_of(dims, e.cls, evaluation.assumed) for e in elements]
        leaves[name] = Sym((sympy.Integer(len(held)),), lambda index, held=held: to_ratio(held[number(index[0])]), True)
    variable = region.variable
    if variable is not None and variable in symbols.owners:
        shape = extents(variable)

        def at(index):
            rest = [number(i) for i in index[1:]]
            j = int(np.ravel_multi_index(rest, [number(e) for e in shape[1:]])) if rest else 0
            if j in region.fixed:
                return Ratio.const(float(region.fixed[j]))
            positions = evaluation.positions
            item = sympy.sympify(index[0])
            ours = (positions and same(item, positions[0])) or (item == 0 and shape[0] == 1)
            return Ratio.of(Poly.symbol(f"v{j}" if ours else f"v{j}@{item}"))

        leaves[variable] = Sym(shape, at)
    return leaves

