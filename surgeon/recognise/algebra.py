"""Polynomials and their quotients in named symbols, each coefficient with its magnitude.

``symbolic.py`` computes what one element of a region is, as an expression in the dims, the
element's position and the variable's elements, with every constant of the graph taken at its
exact value. ``differs`` says whether two such expressions are equal *up to rounding*: their
difference, over one denominator, is exact, and each coefficient carries the magnitude of the
terms that summed to it, the measure floating point's error on a sum is bounded by. Where a
coefficient is not within rounding of its magnitude (a term the other side lacks, ``1e-8 * i``,
is its own magnitude), the difference is weighed against the magnitudes over the sizes it must
hold for (``Bound``), never only at the sizes a probe tried.

Coefficients are float64: its own rounding is 2^-53 of a magnitude, far under any ``rtol`` here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

Monomial = tuple  # sorted ((symbol, power), ...)


def _times(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for s, p in b:
        powers[s] = powers.get(s, 0) + p
    return tuple(sorted((s, p) for s, p in powers.items() if p))


class Poly:
    """A polynomial: monomial -> (coefficient, magnitude). Immutable by convention."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict | None = None):
        self.terms = {m: cv for m, cv in (terms or {}).items() if cv[0] != 0.0 or cv[1] != 0.0}

    @staticmethod
    def const(value: float) -> Poly:
        return Poly({(): (float(value), abs(float(value)))})

    @staticmethod
    def symbol(name: str) -> Poly:
        return Poly({((name, 1),): (1.0, 1.0)})

    def __add__(self, other: Poly) -> Poly:
        out = dict(self.terms)
        for m, (c, g) in other.terms.items():
            c0, g0 = out.get(m, (0.0, 0.0))
            out[m] = (c0 + c, g0 + g)
        return Poly(out)

    def __neg__(self) -> Poly:
        return Poly({m: (-c, g) for m, (c, g) in self.terms.items()})

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly) -> Poly:
        out: dict = {}
        for m1, (c1, g1) in self.terms.items():
            for m2, (c2, g2) in other.terms.items():
                m = _times(m1, m2)
                c0, g0 = out.get(m, (0.0, 0.0))
                out[m] = (c0 + c1 * c2, g0 + g1 * g2)
        return Poly(out)

    def scale(self, k: float) -> Poly:
        return Poly({m: (c * k, g * abs(k)) for m, (c, g) in self.terms.items()})

    def number(self) -> float | None:
        """The value of a polynomial with no symbols (0 for none), else None."""
        if not self.terms:
            return 0.0
        if set(self.terms) == {()}:
            return self.terms[()][0]
        return None

    def symbols(self) -> set:
        return {s for m in self.terms for s, _ in m}

    def exactly_zero(self) -> bool:
        return all(c == 0.0 for c, _ in self.terms.values())

    def key(self) -> tuple:
        """Structure and values, magnitudes aside (equal keys: the same polynomial)."""
        return tuple(sorted((m, c) for m, (c, _) in self.terms.items() if c != 0.0))

    def substitute(self, name: str, value: Poly) -> Poly:
        out = Poly()
        for m, cg in self.terms.items():
            term = Poly({tuple((s, p) for s, p in m if s != name): cg})
            for s, p in m:
                if s == name:
                    for _ in range(p):
                        term = term * value
            out = out + term
        return out

    def __repr__(self) -> str:
        parts = []
        for m, (c, _) in sorted(self.terms.items()):
            parts.append(f"{c:g}" + "".join(f"*{s}" + (f"^{p}" if p != 1 else "") for s, p in m))
        return " + ".join(parts) or "0"


@dataclass(frozen=True)
class Ratio:
    """``num / den``: an element's value (a dim-derived quotient, 2 * i / W, stays exact)."""

    num: Poly
    den: Poly

    @staticmethod
    def of(p: Poly) -> Ratio:
        return Ratio(p, Poly.const(1.0))

    @staticmethod
    def const(value: float) -> Ratio:
        return Ratio.of(Poly.const(value))

    def _over(self, other: Ratio):
        if self.den.key() == other.den.key():
            return self.num, other.num, self.den
        return self.num * other.den, other.num * self.den, self.den * other.den

    def __add__(self, other: Ratio) -> Ratio:
        a, b, d = self._over(other)
        return Ratio(a + b, d).tidy()

    def __sub__(self, other: Ratio) -> Ratio:
        a, b, d = self._over(other)
        return Ratio(a - b, d).tidy()

    def __neg__(self) -> Ratio:
        return Ratio(-self.num, self.den)

    def __mul__(self, other: Ratio) -> Ratio:
        return Ratio(self.num * other.num, self.den * other.den).tidy()

    def __truediv__(self, other: Ratio) -> Ratio:
        if other.num.exactly_zero():
            raise ZeroDivisionError("division by an exact zero")
        return Ratio(self.num * other.den, self.den * other.num).tidy()

    def tidy(self) -> Ratio:
        """A denominator that is one number is divided through (a 0.5 stays a coefficient)."""
        n = self.den.number()
        if n is not None and n != 0.0 and n != 1.0:
            return Ratio(self.num.scale(1.0 / n), Poly.const(1.0))
        if self.num.exactly_zero():
            return Ratio(Poly(), Poly.const(1.0))
        return self

    def number(self) -> float | None:
        n, d = self.num.number(), self.den.number()
        return None if n is None or d is None or d == 0.0 else n / d

    def polynomial(self) -> Poly | None:
        """The numerator when the denominator is 1, else None."""
        return self.num if self.den.number() == 1.0 else None

    def symbols(self) -> set:
        return self.num.symbols() | self.den.symbols()


def differs(a: Ratio, b: Ratio, rtol: float, domain: dict | None = None, atol: float = 0.0) -> tuple | None:
    """How ``a`` and ``b`` differ beyond rounding, or None when they are equal up to it.

    The difference ``a.num * b.den - b.num * a.den`` is exact; each of its coefficients carries
    the magnitude of the terms that summed to it. Without ``domain`` every coefficient must be
    within ``rtol`` of its magnitude (returned: the first that is not, as (monomial, coefficient,
    magnitude)). With ``domain`` (symbol -> ``Bound``: the dims and positions; the other symbols,
    the variables, are free) the difference is weighed where it is largest against its terms'
    magnitudes: at every corner and middle of the domain, one group of terms per monomial of the
    variables (they take any value), so a term below rounding at every size up to
    ``Bound.top`` passes (a 1e-17 constant of a least-squares fit times a position, added to 1)
    while ``1e-8 * position`` does not (1e-2 at 65,536 columns, where the probes saw 1e-7).
    ``atol`` is the error allowed whatever the magnitudes (in units of ``a - b``, per unit of each
    variable). Returned then: where it is off the most, as (the group's monomial of the variables, the error,
    the magnitude, the point)."""
    difference = a.num * b.den - b.num * a.den
    terms = sorted(difference.terms.items(), key=lambda t: -abs(t[1][0]))
    bad = [(m, c, g) for m, (c, g) in terms if abs(c) > rtol * g]
    if not bad or domain is None:
        return bad[0] if bad else None
    groups: dict = {}
    for m, (c, g) in terms:
        free = tuple((s, p) for s, p in m if s not in domain)
        groups.setdefault(free, []).append((tuple((s, p) for s, p in m if s in domain), c, g))
    worst, excess = None, 0.0
    below = a.den * b.den  # the difference of the values is ``difference / below``
    for point in _points(domain):
        below_here = abs(sum(c * _value(m, point) for m, (c, _) in below.terms.items()))
        scale = atol * below_here
        for free, members in groups.items():
            error = sum(c * _value(m, point) for m, c, _ in members)
            size = sum(g * _value(m, point) for m, _, g in members)
            beyond = abs(error) - rtol * size - scale
            if beyond > excess:  # the point where it is off the most
                worst, excess = (free, error / below_here, size / below_here, point), beyond
    return worst


@dataclass(frozen=True)
class Bound:
    """A symbol's range: a dim in ``[least, top]``; a position in ``[0, extent)``, its extent a
    dim's symbol (``of``), a number (``size``), or neither (up to ``top``)."""

    least: int = 2
    top: int = 1 << 16
    position: bool = False
    of: str | None = None
    size: int | None = None


def _value(m: Monomial, point: dict) -> float:
    out = 1.0
    for s, p in m:
        out *= point[s] ** p
    return out


def _points(domain: dict):
    """Every combination of each dim at its least, a middle value and its top, with each
    position at 0, its middle and its last (of the extent at that point)."""
    dims = [s for s, b in domain.items() if not b.position]
    positions = [s for s, b in domain.items() if b.position]
    for values in itertools.product(*[(domain[s].least, 97, domain[s].top) for s in dims]):
        point = dict(zip(dims, (float(v) for v in values)))
        ends = []
        for s in positions:
            b = domain[s]
            extent = point.get(b.of) if b.of else (b.size if b.size is not None else b.top)
            extent = float(extent if extent is not None else b.top)
            ends.append((0.0, float(int(extent) // 2), extent - 1))
        for chosen in itertools.product(*ends):
            yield {**point, **dict(zip(positions, chosen))}


def positive(p: Poly, least: dict[str, int]) -> bool:
    """``p > 0`` for every integer value of its symbols at or above ``least`` (symbol -> bound):
    shifted to start at 0, every coefficient is at least 0 and the constant is above 0."""
    shifted = p
    for s in p.symbols():
        if s not in least:
            return False
        shifted = shifted.substitute(s, Poly.symbol(s) + Poly.const(least[s]))
    constant = shifted.terms.get((), (0.0, 0.0))[0]
    return constant > 0 and all(c >= 0 for c, _ in shifted.terms.values())
