"""Coefficients that follow the dims: a value in pixel units normalised by a size.

A region may be the same function at every size but with coefficients that change with the dims
(a pixel-space matrix divided by ``[W/2, H/2]``, a pixel grid scaled by ``2/W``): each coefficient
is the one at the probe's dims times a monomial ``prod(d ** e * (d - 1) ** f)`` of the dims (e, f
in -2..2: 2/W, H/W, W/2, and 2/(W - 1), (H - 1)/H). The proof has already settled that sizes
reach the values only through smooth arithmetic (a step or a curve of a size is refused there),
so a coefficient is a rational function of the dims; here each dim group is varied alone, twice,
to read its exponents; the caller's checks (each group varied again at other values, then all at
once) hold the monomials, and its rewrite computes them from the model's own dims at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_EXPONENT = 2
RATIO_RTOL = 1e-4  # a fitted coefficient's ratio against the monomial's (float32 fits: ~1e-6)
ZERO = 1e-6  # of the largest coefficient: a coefficient this small is 0 (float32 fits)


@dataclass(frozen=True)
class DimScaling:
    """``coefficient(dims) = coefficient(base) * prod over groups of (d / b) ** e * ((d - 1) /
    (b - 1)) ** f``, d a group's value at run time, b at the probe's base.

    ``reps``: the class standing for each varied group; ``exponents``: [coefficients, groups, 2]
    (e for d, f for d - 1: align_corners=True's 2 / (W - 1) and its kin)."""

    reps: tuple[int, ...]
    exponents: np.ndarray
    base: tuple[int, ...]  # each rep's value where the coefficients were fitted

    def factor(self, assign: dict) -> np.ndarray:
        """Per coefficient, its monomial at ``assign`` over its value at the base."""
        d = np.array([assign[r] for r in self.reps], np.float64)
        return _monomials(self.exponents, d) / self.at_base()

    def monomials(self) -> dict[tuple, np.ndarray]:
        """Each distinct exponent row (per group: (e, f)) and the coefficients (a mask) it scales."""
        rows: dict[tuple, np.ndarray] = {}
        for i, row in enumerate(self.exponents.astype(int)):
            key = tuple(map(tuple, row))
            rows.setdefault(key, np.zeros(len(self.exponents), bool))[i] = True
        return rows

    def at_base(self) -> np.ndarray:
        """Per coefficient, its monomial's value at the base: the constant the rewrite divides
        the base coefficients by, so that it multiplies by the run-time monomial alone."""
        return _monomials(self.exponents, np.array(self.base, np.float64))


def _monomials(exponents: np.ndarray, d: np.ndarray) -> np.ndarray:
    e, f = exponents[..., 0], exponents[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):  # 1/(d - 1) at d = 1: inf, as the original's
        return np.prod(d[None, :] ** e * (d[None, :] - 1) ** f, axis=1)


_CANDIDATES = [(e, f) for e in range(-MAX_EXPONENT, MAX_EXPONENT + 1) for f in range(-MAX_EXPONENT, MAX_EXPONENT + 1)]
_CANDIDATES.sort(key=lambda ef: (abs(ef[0]) + abs(ef[1]), abs(ef[1])))  # the simplest first


def exponents(before: np.ndarray, afters: list, base: int, fit_rtol: float = 0.0) -> np.ndarray | None:
    """Per coefficient, (e, f) with ``after == before * (v / base) ** e * ((v - 1) / (base - 1)) ** f``
    for every ``(v, after)`` in ``afters``, or None when some coefficient is no such monomial of
    this dim (or appears from 0). ``fit_rtol``: how far a fit of the region's precision may be
    off (a half-precision region's: 5e-3)."""
    zero, close = max(ZERO, fit_rtol), max(RATIO_RTOL, 4 * fit_rtol)
    before = before.reshape(-1)
    afters = [(v, np.asarray(a).reshape(-1)) for v, a in afters]
    scale = max([float(np.abs(before).max(initial=0.0))] + [float(np.abs(a).max(initial=0.0)) for _, a in afters])
    scale = max(scale, 1e-30)
    found = np.zeros((before.size, 2), np.int64)
    for i, a in enumerate(before):
        if abs(a) <= zero * scale:
            if any(abs(after[i]) > zero * scale for _, after in afters):
                return None
            continue
        ratios = [(after[i] / a, v / base, (v - 1) / (base - 1)) for v, after in afters]
        match = next(((e, f) for e, f in _CANDIDATES
                      if all(abs(r - x ** e * y ** f) <= close * x ** e * y ** f for r, x, y in ratios)), None)
        if match is None:
            return None
        found[i] = match
    return found


def measure(fit, plan, base: dict, fit_rtol: float = 0.0) -> DimScaling | None:
    """Vary each group alone (two values no other check uses) and refit: a ``DimScaling`` when
    some coefficient follows a dim as such a monomial, None when none does or one follows it
    otherwise (the identification's checks then name the dim). A group the region does not run
    or fit at other values is left out: the checks after say whether it is pinned or refused.

    ``fit(assign)``: the coefficients fitted at those dims (flat float64), or None."""
    at_base = fit(base)
    if at_base is None:
        return None
    reps, values, columns = [], [], []
    for g in range(len(plan.groups)):
        if set(plan.groups[g]) & plan.batch_like:
            continue
        rep = plan.rep(g)
        used = set(base.values()) | {plan.fresh(g, set(base.values())), plan.far(base)}
        afters = []
        for _ in range(2):
            value = plan.fresh(g, used)
            used.add(value)
            varied = fit(plan.with_value(base, g, value))
            if varied is not None:
                afters.append((value, varied))
        if len(afters) < 2:
            continue
        found = exponents(at_base, afters, base[rep], fit_rtol)
        if found is None:
            return None
        reps.append(rep)
        values.append(base[rep])
        columns.append(found)
    if not columns or not any(np.any(c) for c in columns):
        return None
    keep = [i for i, c in enumerate(columns) if np.any(c)]
    return DimScaling(tuple(reps[i] for i in keep), np.stack([columns[i] for i in keep], axis=1),
                      tuple(values[i] for i in keep))
