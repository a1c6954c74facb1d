"""The pieces of ``symbolic``'s exact evaluation that its rules share: a tensor of exact elements
(``Sym``: extents as sympy integers, an element at an index of sympy integers), the integer
algebra of indices and extents (a flattened position split back by proving the remainder in
range, broadcasting, a scalar, a size tensor's elements), and constants read exactly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy

from .algebra import Poly, Ratio, positive

LEAST = 2  # dims are at least this here (a size of 1 is proved by evaluation: small_dims)


class NotExact(Exception):
    """No exact rule for this step; the message names it."""


class Tied(NotExact):
    """A step that runs only where two extents are equal (a broadcast of two non-1 extents, a
    reshape's element count, a concatenation's other axes, a matrix product's inner axis): every
    run of the region that succeeds has ``a == b``, which the evaluation may then assume."""

    def __init__(self, a, b, what: str):
        super().__init__(f"{what} only where {a} = {b}")
        self.a, self.b = sympy.sympify(a), sympy.sympify(b)


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


def nonneg(expr, ranges: dict) -> bool:
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
            if sympy.expand(expr - coefficient * p).has(p) or not nonneg(coefficient, {}):
                return None
            expr = sympy.expand(expr.subs(p, extent - 1))
    return expr


def split(expr, divisor, ranges: dict):
    """``(expr // divisor, expr % divisor)`` for every size: the terms that divisor divides, and
    the rest proved within ``[0, divisor)``."""
    expr, divisor = sympy.expand(expr), sympy.expand(divisor)
    if divisor == 1:
        return expr, sympy.Integer(0)
    if _within(expr, divisor, ranges):  # the whole of it (W - 1 by W: 0, W - 1)
        return sympy.Integer(0), expr
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
    if not _within(rest, divisor, ranges):
        raise NotExact(f"cannot split {expr} by {divisor} for every size")
    return sympy.expand(quotient), sympy.expand(rest)


def _within(expr, divisor, ranges: dict) -> bool:
    """``0 <= expr < divisor`` for every size and position."""
    top = _upper(expr, ranges)
    return top is not None and nonneg(expr, ranges) and nonneg(divisor - 1 - top, {})


def same(a, b) -> bool:
    return sympy.expand(a - b) == 0


# -- broadcasting and moves ----------------------------------------------------------------------

def broadcast(*shapes) -> tuple:
    rank = max(len(s) for s in shapes)
    out = []
    for axis in range(rank):
        extents = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        wide = [e for e in extents if e != 1]
        for e in wide:
            if not same(e, wide[0]):
                if not (_above_one(e) and _above_one(wide[0])):  # one may be 1 at some size: it broadcasts there
                    raise NotExact(f"extents {extents} broadcast only at some sizes")
                raise Tied(e, wide[0], f"extents {extents} broadcast")
        out.append(wide[0] if wide else sympy.Integer(1))
    return tuple(out)


def _above_one(extent) -> bool:
    """At least 2 for every dim of at least ``LEAST`` (``d - 1`` is 1 at d = 2, and broadcasts there)."""
    poly = to_ratio(sympy.sympify(extent) - 1).polynomial()
    if poly is None:
        return False
    n = poly.number()
    return n > 0 if n is not None else positive(poly, {s: LEAST for s in poly.symbols() if s.startswith("d")})


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
    """The index into ``shape`` of a flat position: its digits, last axis first, each the
    remainder proved in range (the first's quotient proved 0 the same way)."""
    digits = []
    for e in reversed(shape):
        flat, digit = split(flat, e, ranges)
        digits.append(digit)
    return tuple(reversed(digits))


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
    base = float(table[(0,) * table.ndim])
    steps, fitted = [], np.full(table.shape, base)
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
