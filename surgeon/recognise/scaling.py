"""Coefficients that follow the dims: a value in pixel units normalised by a size.

A region may be the same function at every size but with coefficients that change with the dims
(a pixel-space matrix divided by ``[W/2, H/2]``, a pixel grid scaled by ``2/W``): each coefficient
is the one at the probe's dims times a monomial ``prod(d ** e * (d - 1) ** f)`` of the dims (e, f
in -2..2: 2/W, H/W, W/2, and 2/(W - 1), (H - 1)/H). The proof has already settled that sizes
reach the values only through smooth arithmetic (a step or a curve of a size is refused there),
so a coefficient is a rational function of the dims; here each dim group is varied alone, twice,
to read its exponents; the caller's checks (each group varied again at other values, then all at
once) hold the monomials, and its rewrite computes them from the model's own dims at run time.

Where some coefficient is no one monomial of a dim (a pixel-space matrix on pixel centres
counted from the corner: ``M00 - 1 + M01 H / W + 2 M02 / W``), ``sums`` fits every coefficient as
a sum of products of 1, d, 1/d and 1/(d - 1) over the groups it follows, over values of each
group from 2 to far, keeps the fewest terms that hold, and holds the sum at other values near
and far (four terms follow ``2 / (W + 0.5)`` over nearby sizes, not out to 2 and to hundreds).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

MAX_EXPONENT = 2
RATIO_RTOL = 1e-4  # a fitted coefficient's ratio against the monomial's (float32 fits: ~1e-6)
ZERO = 1e-6  # of the largest coefficient: a coefficient this small is 0 (float32 fits)


@dataclass(frozen=True)
class DimScaling:
    """``coefficient(dims) = sum over rows r of weights[r] * prod over groups of d ** e * (d - 1) ** f``,
    d a group's value at run time, (e, f) the row's exponents for it: one row per coefficient
    where each is one monomial (2/W, H/W, align_corners=True's 2 / (W - 1) and its kin); several
    where a coefficient is a sum of them (a pixel-space matrix on a grid not centred on the
    image: ``c0 + c1 (H - 1)/(W - 1) + c2 / (W - 1)``).

    ``reps``: the class standing for each varied group; ``rows``: the distinct monomials, each a
    tuple of (e, f) per rep; ``weights``: [rows, coefficients]; ``base``: each rep's value where
    the coefficients were fitted."""

    reps: tuple[int, ...]
    rows: tuple[tuple[tuple[int, int], ...], ...]
    weights: np.ndarray
    base: tuple[int, ...]

    def values(self, assign: dict) -> np.ndarray:
        """Every coefficient at ``assign``."""
        d = np.array([assign[r] for r in self.reps], np.float64)
        m = _monomials(np.array(self.rows, np.float64).reshape(len(self.rows), -1, 2), d)[:, None]
        with np.errstate(invalid="ignore"):  # a monomial infinite at a size of 1 counts only where it is a term
            return np.where(self.weights != 0, self.weights * m, 0.0).sum(axis=0)

    def monomials(self) -> dict[tuple, np.ndarray]:
        """Each monomial (per group: (e, f)) and its weight for every coefficient (0: not in it)."""
        return {row: self.weights[i] for i, row in enumerate(self.rows)}


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
        if found is None:  # some coefficient is no one monomial of this dim: a sum of them?
            return sums(fit, plan, base, at_base, fit_rtol)
        reps.append(rep)
        values.append(base[rep])
        columns.append(found)
    if not columns or not any(np.any(c) for c in columns):
        return None
    keep = [i for i, c in enumerate(columns) if np.any(c)]
    exps = np.stack([columns[i] for i in keep], axis=1)  # [coefficients, groups, 2]
    base_values = np.array([values[i] for i in keep], np.float64)
    rows = list(dict.fromkeys(tuple(map(tuple, row)) for row in exps.astype(int)))
    weights = np.zeros((len(rows), exps.shape[0]))
    at = _monomials(exps, base_values)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, row in enumerate(exps.astype(int)):
            weights[rows.index(tuple(map(tuple, row))), i] = at_base[i] / at[i]
    return DimScaling(tuple(reps[i] for i in keep), tuple(rows), weights, tuple(values[i] for i in keep))


# Per group, the terms a sum may hold: 1, d, 1 / d, 1 / (d - 1) (linearly independent; with
# their products over groups they span H / W, (H - 1) / (W - 1), 2 / (W - 1) and the constants a
# pixel-space matrix on a grid not centred on the image gives).
SUM_TERMS = ((0, 0), (1, 0), (-1, 0), (0, -1))
SUM_VALUES = 5  # values per group the sums are fitted over (and three more each to check them)
MAX_SUM_GROUPS = 3

def _fewest_terms(design: np.ndarray, targets: np.ndarray, tol: float) -> list[int] | None:
    """Columns of ``design`` whose least-squares fit leaves every target within ``tol``, found by
    dropping one column at a time (the one whose loss leaves the least) while the fit holds: a
    pixel-space matrix's sums have three or four terms, and a solve over all the products at
    once spreads rounding over terms that are not there (1 / (d - 1) among them: infinite at 1)."""
    def left(cols):
        sub = design[:, cols]
        return np.abs(sub @ np.linalg.lstsq(sub, targets, rcond=None)[0] - targets).max()

    chosen = list(range(design.shape[1]))
    if left(chosen) > tol:
        return None
    while len(chosen) > 1:
        trials = [(left([c for c in chosen if c != t]), t) for t in chosen]
        best, drop = min(trials)
        if best > tol:
            break
        chosen.remove(drop)
    return chosen


def _remembered(fit, memo: dict):
    def once(assign: dict):
        key = tuple(sorted(assign.items()))
        if key not in memo:
            memo[key] = fit(assign)
        return memo[key]
    return once


def sums(fit, plan, base: dict, at_base: np.ndarray, fit_rtol: float = 0.0) -> DimScaling | None:
    """Coefficients as sums of monomials of the groups they follow: every combination of
    ``SUM_VALUES`` values per group fitted (a least-squares solve over the products of
    ``SUM_TERMS``, then again over the terms that count), then held at other values of every
    group at once. None when some coefficient is no such sum (or the region does not run at
    those values)."""
    scale = max(float(np.abs(at_base).max(initial=0.0)), 1e-30)
    close = max(RATIO_RTOL, 4 * fit_rtol)
    fitted: dict = {}
    fit = _remembered(fit, fitted)  # a group's first value is tried alone, then again in the grid
    far = plan.far(base)
    used = set(base.values()) | {far, 3 * far + 1}
    groups, choices = [], []
    for g in range(len(plan.groups)):
        if set(plan.groups[g]) & plan.batch_like:
            continue
        # fitted over values spread from 2 to far (1 / d and 1 / (d - 1) apart), held at others
        near = [plan.fresh(g, used)]
        near.append(plan.fresh(g, used | set(near)))
        near.append(plan.fresh(g, used | set(near)))
        picked = [2, 3, base[plan.rep(g)], near[0], far, near[1], near[2], 3 * far + 1]
        if len(set(picked)) < len(picked):
            return None
        used |= set(near)
        moved = fit(plan.with_value(base, g, near[0]))
        if moved is None:
            return None
        if np.abs(np.asarray(moved) - at_base).max(initial=0.0) > close * scale:  # a group they follow
            groups.append(g)
            choices.append(picked)
    if not groups or len(groups) > MAX_SUM_GROUPS:
        return None
    reps = tuple(plan.rep(g) for g in groups)

    def at(combo):
        assign = dict(base)
        for g, value in zip(groups, combo):
            assign = plan.with_value(assign, g, value)
        return assign

    rows = list(itertools.product(SUM_TERMS, repeat=len(groups)))
    design, targets = [], []
    for combo in itertools.product(*[c[:SUM_VALUES] for c in choices]):
        found = at_base if all(v == base[r] for v, r in zip(combo, reps)) else fit(at(combo))
        if found is None:
            return None
        design.append(_monomials(np.array(rows, np.float64), np.array(combo, np.float64)))
        targets.append(np.asarray(found, np.float64).reshape(-1))
    design, targets = np.array(design), np.array(targets)
    keep = _fewest_terms(design, targets, close * scale * 0.1)
    if keep is None:
        return None
    weights = np.zeros((len(rows), targets.shape[1]))
    weights[keep] = np.linalg.lstsq(design[:, keep], targets, rcond=None)[0]
    found = DimScaling(reps, tuple(rows[t] for t in keep), weights[keep], tuple(base[r] for r in reps))
    # held at values no fit used, near and far
    for combo in itertools.product(*[c[SUM_VALUES:] for c in choices]):
        want = fit(at(combo))
        if want is None:
            continue  # the region does not run there (a size its Reshape cannot take): nothing to hold
        if np.abs(found.values(at(combo)) - want).max() > close * max(scale, float(np.abs(want).max())):
            return None
    return found
