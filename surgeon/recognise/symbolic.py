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
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy

from .algebra import Bound, Poly, Ratio, positive

LEAST = 2  # dims are at least this here (a size of 1 is proved by evaluation: small_dims)
_HUGE = 1 << 60  # a Slice end past this is "to the end"


class NotExact(Exception):
    """No exact rule for this step; the message names it."""


@dataclass
class Sym:
    """A tensor: its extents (sympy integers) and its element at an index (sympy integers)."""

    shape: tuple
    at: Callable[[tuple], Ratio]
    integer: bool = False  # an integer type (Div floors)


def dim_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True)  # one kind for every name: a name means one symbol


# -- integer expressions <-> polynomials ---------------------------------------------------------

def to_ratio(expr) -> Ratio:
    expr = sympy.expand(sympy.sympify(expr))
    if expr.is_Number:
        return Ratio.const(float(expr))
    gens = sorted(expr.free_symbols, key=str)
    try:
        poly = sympy.Poly(expr, *gens)
    except sympy.PolynomialError:
        raise NotExact(f"{expr} is not a polynomial in the dims and positions") from None
    out = Poly()
    for powers, c in poly.terms():
        monomial = tuple(sorted((str(g), int(p)) for g, p in zip(gens, powers) if p))
        out = out + Poly({monomial: (float(c), abs(float(c)))})
    return Ratio.of(out)


def to_integer(value: Ratio):
    """An element used as a size or an index: an integer polynomial, as sympy."""
    poly = value.polynomial()
    if poly is None:
        raise NotExact("a size or index that is a quotient")
    total = sympy.Integer(0)
    for monomial, (c, _) in poly.terms.items():
        if c != int(c):
            raise NotExact(f"a size or index with the fraction {c}")
        term = sympy.Integer(int(c))
        for s, p in monomial:
            term *= dim_symbol(s) ** p
        total += term
    return total


def _nonneg(expr, ranges: dict) -> bool:
    """``expr >= 0`` for every dim >= 1 and every position in its range (linear in positions,
    each coefficient at least 0 for every dim)."""
    expr = sympy.expand(expr)
    if expr.is_Number:
        return expr >= 0
    shifted = expr.subs({s: s + 1 for s in expr.free_symbols if s not in ranges}, simultaneous=True)
    shifted = sympy.expand(shifted)
    gens = sorted(shifted.free_symbols, key=str)
    return all(c >= 0 for c in sympy.Poly(shifted, *gens).coeffs()) if gens else shifted >= 0


def _upper(expr, ranges: dict):
    """The largest value of ``expr`` over the positions' ranges, for an expression linear in the
    positions with coefficients at least 0 (None otherwise)."""
    expr = sympy.expand(expr)
    for p, extent in ranges.items():
        if expr.has(p):
            coefficient = expr.coeff(p, 1)
            if sympy.expand(expr - coefficient * p).has(p) or not _nonneg(coefficient, {}):
                return None
            expr = sympy.expand(expr.subs(p, extent - 1))
    return expr


def split(expr, divisor, ranges: dict):
    """``(expr // divisor, expr % divisor)`` for every size: the terms that divisor divides, and
    the rest proved within ``[0, divisor)``."""
    expr, divisor = sympy.expand(expr), sympy.expand(divisor)
    if divisor == 1:
        return expr, sympy.Integer(0)
    quotient, rest = sympy.Integer(0), sympy.Integer(0)
    for term in sympy.Add.make_args(expr):
        q = sympy.cancel(term / divisor)
        if sympy.fraction(q)[1] == 1 and q.is_polynomial(*q.free_symbols):
            quotient += q
        else:
            rest += term
    if divisor.is_Integer:  # a number's multiples of a numeric divisor go to the quotient
        c = rest.as_coeff_Add()[0]
        if c.is_Integer and not 0 <= c < divisor:
            quotient, rest = quotient + c // divisor, rest - (c // divisor) * divisor
    top = _upper(rest, ranges)
    if top is None or not _nonneg(rest, ranges) or not _nonneg(divisor - 1 - top, {}):
        raise NotExact(f"cannot split {expr} by {divisor} for every size")
    return sympy.expand(quotient), sympy.expand(rest)


def same(a, b) -> bool:
    return sympy.expand(a - b) == 0


# -- broadcasting and moves ----------------------------------------------------------------------

def broadcast(*shapes) -> tuple:
    rank = max(len(s) for s in shapes)
    out = []
    for axis in range(rank):
        extents = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        wide = [e for e in extents if e != 1]
        if any(not same(e, wide[0]) for e in wide):
            raise NotExact(f"extents {extents} broadcast only at some sizes")
        out.append(wide[0] if wide else sympy.Integer(1))
    return tuple(out)


def broadcast_index(index: tuple, shape: tuple) -> tuple:
    """The index into an input of ``shape`` that broadcasts to the output's."""
    tail = index[len(index) - len(shape):]
    return tuple(sympy.Integer(0) if e == 1 else i for i, e in zip(tail, shape))


def flat_index(index: tuple, shape: tuple):
    flat = sympy.Integer(0)
    for i, e in zip(index, shape):
        flat = flat * e + i
    return sympy.expand(flat)


def unflat_index(flat, shape: tuple, ranges: dict) -> tuple:
    out = []
    stride = sympy.Integer(1)
    strides = []
    for e in reversed(shape):
        strides.append(stride)
        stride = sympy.expand(stride * e)
    for e, s in zip(shape, reversed(strides)):
        q, _ = split(flat, s, ranges)
        _, r = split(q, e, ranges) if e != 1 else (q, sympy.Integer(0))
        out.append(r)
    return tuple(out)


def number(expr) -> int:
    expr = sympy.sympify(expr)
    if not expr.is_Integer:
        raise NotExact(f"an index or size {expr} where a number is needed")
    return int(expr)


def scalar(sym: Sym) -> Ratio:
    """The one element of a tensor whose every extent is 1 (a scalar, or a [1] a graph broadcasts)."""
    if any(e != 1 for e in sym.shape):
        raise NotExact(f"a tensor of extents {sym.shape} where one value is read")
    return sym.at(tuple(sympy.Integer(0) for _ in sym.shape))


def _affine_read(table: np.ndarray, positions: list) -> Ratio:
    """``table[positions]`` for a table that is ``base + sum_k step_k * i_k`` at every element."""
    table = table.astype(np.float64)
    if not np.all(np.isfinite(table)):
        raise NotExact("a constant that is not finite")
    origin = (0,) * table.ndim
    base, value = float(table[origin]), None
    steps, fitted = [], np.full(table.shape, float(table[origin]))
    for k, extent in enumerate(table.shape):
        step = float(table[tuple(1 if a == k else 0 for a in range(table.ndim))] - base) if extent > 1 else 0.0
        steps.append(step)
        fitted = fitted + step * np.arange(extent).reshape([-1 if a == k else 1 for a in range(table.ndim)])
    if not np.array_equal(fitted, table):
        raise NotExact("a constant table read at a position that follows the dims")
    value = Ratio.const(base)
    for step, position in zip(steps, positions):
        if step:
            value = value + Ratio.const(step) * to_ratio(position)
    return value


def integers(sym: Sym) -> list:
    """Every element of a small 1-D (or scalar) tensor, as integers (sizes, axes, bounds)."""
    if len(sym.shape) > 1:
        raise NotExact("a size tensor of rank above 1")
    if not sym.shape:
        return [to_integer(scalar(sym))]
    return [to_integer(sym.at((sympy.Integer(i),))) for i in range(number(sym.shape[0]))]


def constant(array: np.ndarray) -> Sym:
    """A constant tensor. Read at a position that follows the dims along an axis, it is exact only
    where it is the same along that axis, or affine in the position (an arange table an exporter
    wrote for a size it saw: checked over every element the axis holds)."""
    array = np.asarray(array)

    def at(index):
        index = [sympy.sympify(i) for i in index]
        free = [a for a, i in enumerate(index) if not i.is_Integer]
        picked = tuple(slice(None) if a in free else int(i) for a, i in enumerate(index))
        table = array[picked] if index else array[()]
        if table.dtype == np.bool_:
            table = table.astype(np.int64)
        if free:
            return _affine_read(table, [index[a] for a in free])
        if not np.isfinite(float(table)):
            raise NotExact("a constant that is not finite")
        return Ratio.const(float(table))

    return Sym(tuple(sympy.Integer(d) for d in array.shape), at, array.dtype.kind in "biu")


class Evaluation:
    """One symbolic evaluation of a region (see the module's text)."""

    def __init__(self, ctx, nodes, values: dict, leaves, rules: dict | None = None):
        """``leaves``: value -> ``Sym``, or a function of this evaluation giving them."""
        self.ctx, self.values, self.rules = ctx, values, rules or {}
        self.ranges: dict = {}  # position symbol -> its axis's extent
        self.positions: tuple = ()  # the generic element's leading index (``element``)
        self.syms: dict[str, Sym] = dict(leaves(self) if callable(leaves) else leaves)
        for node in nodes:
            outs = [o for o in node.outputs if o]
            if outs and all(o in self.syms for o in outs):
                continue
            ins = [self.sym(i) if i else None for i in node.inputs]
            domain = "" if node.domain in ("", "ai.onnx") else node.domain
            rule = self.rules.get((domain, node.op_type)) or (RULES.get(node.op_type) if domain == "" else None) or \
                CONTRIB.get((domain, node.op_type))
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
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    evaluation = None
    try:
        evaluation = Evaluation(ctx, nodes, values, leaves, rules)
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


def dim_of(dims, cls: int):
    """A class's symbol: its group's (``DimPlan``), or the value the plan fixes it at."""
    if cls in dims.fixed:
        return sympy.Integer(dims.fixed[cls])
    return dim_symbol(f"d{dims.rep(dims.group_of(cls))}")


def region_leaves(region, symbols, dims, values: dict, evaluation) -> dict[str, Sym]:
    """The leaves of a cut region (``Region``): its ``Shape``/``Size`` of run-time tensors, its
    folded shapes, its run-time int tensors read as sizes (each element its class's symbol) and
    its variable, whose element ``j`` of the item the output's first position names is ``v<j>``
    (elements every run holds, ``region.fixed``, are those values). ``evaluation``: the one
    that reads them (the output's positions are known only once it asks for them)."""
    def extents(value):
        return tuple(sympy.Integer(d) if isinstance(d, int) else dim_of(dims, d.cls) for d in symbols.owners[value])

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
        held = [dim_of(dims, e.cls) for e in elements]
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


from .symbolic_rules import CONTRIB, RULES
