"""Coefficients that follow the dims: a pixel-space matrix normalised by the image's size.

torchvision's ``affine`` divides a pixel-space grid by ``[W/2, H/2]``; MONAI's resamplers scale a
pixel grid by ``2/W``. Either grid is ``affine_grid(theta')`` at every size, but theta' (fitted,
or an affine map of the model's theta) changes with the dims: each coefficient is the one at the
probe's dims times a monomial ``prod(d ** e)`` of the dims (e in -2..2; 2/W, H/W, W/2). The
proof has already settled that sizes reach the grid's values only through smooth arithmetic
(a step or a curve of a size is refused there), so a coefficient is a rational function of
the dims; here each dim group is varied alone to read its exponent, and the identification's
checks (each group varied again at other values, then all at once) hold the monomials.

The rewrite computes the same monomials from the model's own dims at run time (``write.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_EXPONENT = 2
RATIO_RTOL = 1e-4  # a fitted coefficient's ratio against the monomial's (float32 fits: ~1e-6)
ZERO = 1e-6  # of the largest coefficient: a coefficient this small is 0 (float32 fits)


@dataclass(frozen=True)
class DimScaling:
    """``coefficient(dims) = coefficient(base) * prod over groups (dims[rep] / base[rep]) ** e``.

    ``reps``: the class standing for each varied group; ``exponents``: [coefficients, groups]."""

    reps: tuple[int, ...]
    exponents: np.ndarray
    base: tuple[int, ...]  # each rep's value where the coefficients were fitted

    def factor(self, assign: dict) -> np.ndarray:
        """Per coefficient, its monomial at ``assign`` over its value at the base."""
        ratios = np.array([assign[r] / b for r, b in zip(self.reps, self.base)], np.float64)
        return np.prod(ratios[None, :] ** self.exponents, axis=1)

    def monomials(self) -> dict[tuple[int, ...], np.ndarray]:
        """Each distinct exponent row and the coefficients (a mask) it scales."""
        rows: dict[tuple[int, ...], np.ndarray] = {}
        for i, row in enumerate(map(tuple, self.exponents.astype(int))):
            rows.setdefault(row, np.zeros(len(self.exponents), bool))[i] = True
        return rows

    def at_base(self) -> np.ndarray:
        """Per coefficient, its monomial's value at the base: the constant the rewrite divides
        the base coefficients by, so that it multiplies by the run-time monomial alone."""
        values = np.array(self.base, np.float64)
        return np.prod(values[None, :] ** self.exponents, axis=1)


def exponents(before: np.ndarray, after: np.ndarray, ratio: float, fit_rtol: float = 0.0) -> np.ndarray | None:
    """Per coefficient, the exponent e with ``after == before * ratio ** e``, or None when some
    coefficient is no monomial of this dim (or appears from 0). ``fit_rtol``: how far a fit of
    the region's precision may be off (a half-precision grid's: 5e-3)."""
    zero, close = max(ZERO, fit_rtol), max(RATIO_RTOL, 4 * fit_rtol)
    before, after = before.reshape(-1), after.reshape(-1)
    scale = max(float(np.abs(before).max(initial=0.0)), float(np.abs(after).max(initial=0.0)), 1e-30)
    found = np.zeros(before.size, np.int64)
    for i, (a, b) in enumerate(zip(before, after)):
        if abs(a) <= zero * scale:
            if abs(b) > zero * scale * max(1.0, ratio ** MAX_EXPONENT, ratio ** -MAX_EXPONENT):
                return None
            continue
        r = b / a
        if r <= 0:
            return None
        e = round(math.log(r) / math.log(ratio))
        if abs(e) > MAX_EXPONENT or abs(r - ratio ** e) > close * ratio ** e:
            return None
        found[i] = e
    return found


def measure(fit, plan, base: dict, fit_rtol: float = 0.0) -> DimScaling | None:
    """Vary each group alone (a value no other check uses) and refit: a ``DimScaling`` when some
    coefficient follows a dim as a power of it, None when none does or one follows it otherwise
    (the identification's checks then name the dim). A group the region does not run or fit at
    other values is left out: the checks after say whether it is pinned or refused.

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
        value = plan.fresh(g, used)
        varied = fit(plan.with_value(base, g, value))
        if varied is None:
            continue
        found = exponents(at_base, varied, value / base[rep], fit_rtol)
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
