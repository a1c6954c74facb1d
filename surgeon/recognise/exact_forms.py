"""What an identified form is, written exactly for ``symbolic``'s comparison: coefficients that
follow the dims (``scaling.DimScaling``) as the rational functions they were fitted as, an
affine map of the variable's elements, fitted weights that are noise, and where a form and a
region part, in the words of a refusal."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .algebra import Poly, Ratio
from .symbolic import dim_of, to_ratio


def coefficients(scaling, dims, assumed: dict | None = None) -> list[Ratio]:
    """Each coefficient of a ``DimScaling``: sum over rows of weight * prod d^e (d - 1)^f (each d
    as ``symbolic.dim_of`` gives it, ``assumed`` included)."""
    monomials = []
    for row in scaling.rows:
        term = Ratio.const(1.0)
        for rep, (e, f) in zip(scaling.reps, row):
            d = to_ratio(dim_of(dims, rep, assumed)).num
            for factor, power in ((d, e), (d - Poly.const(1.0), f)):
                for _ in range(abs(power)):
                    term = term * Ratio.of(factor) if power > 0 else term / Ratio.of(factor)
        monomials.append(term)
    out = []
    for i in range(scaling.weights.shape[1]):
        total = Ratio.const(0.0)
        for r, monomial in enumerate(monomials):
            if scaling.weights[r, i] != 0.0:
                total = total + monomial * Ratio.const(float(scaling.weights[r, i]))
        out.append(total)
    return out


def mapped(sources: list[Ratio], flat: list[Ratio]) -> list[Ratio]:
    """``sources @ weight + bias`` with ``flat`` = weight [p, q] row-major, then bias [q]."""
    p = len(sources)
    q = len(flat) // (p + 1)
    out = []
    for i in range(q):
        total = flat[p * q + i]
        for m in range(p):
            if flat[m * q + i].number() != 0.0:
                total = total + sources[m] * flat[m * q + i]
        out.append(total)
    return out


def without_noise(scaling, rtol: float):
    """The scaling with every weight under ``rtol`` of its coefficient's largest set to 0: fitted
    to float32 samples, a weight may hold a term like 4e-9 * W / H, unseen at the probes' sizes and
    1e-4 at 65,536 columns."""
    top = np.abs(scaling.weights).max(axis=0, keepdims=True)
    return replace(scaling, weights=np.where(np.abs(scaling.weights) <= rtol * top, 0.0, scaling.weights))


def named(monomial, symbols, variable_noun: str = "variable") -> str:
    """A monomial of dims (their classes' names), positions and the variable's elements."""
    parts = []
    for name, power in monomial:
        if name.startswith("d"):
            label = symbols.name(int(name[1:]))
        elif name.startswith("p"):
            label = f"position[{name[1:]}]"
        else:
            label = f"{variable_noun}[{name[1:]}]"
        parts.append(label + (f"^{power}" if power != 1 else ""))
    return " * ".join(parts)


def where(found, symbols, variable_noun: str = "variable") -> str:
    """``algebra.differs``' answer in words: the term, by how much, at which sizes and positions."""
    free, error, size, point = found
    term = named(free, symbols, variable_noun) or "the constant part"
    at = ", ".join(f"{named(((s, 1),), symbols)}={int(v)}" for s, v in sorted(point.items()))
    return f"its term in {term} is off by {abs(error):.3g} (of {size:.3g}) at {at}"
