"""Compare a region's grid with the analytic affine grid, and say what disagreed when it does not
match. A size-1 dim with align_corners=1 may sit at torch's 0, ONNX's -1 or onnxruntime's +1,
per dim; the comparison finds which."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from surgeon.recognise import scaled

from surgeon_ops.grid_math import SIZE_ONE, TORCH, affine_grid

# Precision of the lowest-precision float a region computes in -> (atol, rtol). Half precision
# rounds each product and sum: a few ulps of grid values up to ~15 (the probe's large thetas).
# atol is for grids of magnitude 1 and more; a smaller grid (a region that scales theta down)
# is held to atol times its magnitude (``surgeon.recognise.scaled``): else a bent base grid would
# pass at 1e-4.
TOLERANCES = {"double": (1e-5, 1e-5), "single": (1e-5, 1e-5), "half": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}
# A grid held to affine_grid(theta) is judged against rounding, not against a fixed fraction of
# its values: each coordinate may be off by (atol, rtol) with rtol a share of the sum of its
# terms' magnitudes, |theta| . |base| (summed in another order, a float32 grid's terms round by
# their own size; the shipped forms stay under 13 unit roundoffs). 48 float32 roundoffs is
# 4x that, and far under what a grid scaled by 1 + 1e-5 or rounded to 2^-16 is off by: an
# error below a fixed rtol of 1e-5 grows with the coordinates, unseen by probes near 1.
# A double grid is held to double's roundoffs: ONNX's own AffineGrid computes it in double, and a
# base rounded to float32 somewhere (a folded float constant) is no longer that grid.
GRID_TOLERANCES = {"double": (1e-16, 48 * 2.0 ** -53), "single": (1e-7, 48 * 2.0 ** -24),
                   "half": TOLERANCES["half"], "bfloat16": TOLERANCES["bfloat16"]}


@dataclass
class Agreement:
    align_corners: int
    size_one: tuple  # (spatial axis, coordinate) for size-1 dims not at torch's 0


@dataclass
class Disagreement:
    error: float  # the smallest max error over the settings tried (nan: non-finite grid)
    item: int  # the batch item with the largest error under the best setting

    def describe(self, labels: list[str] | None = None) -> str:
        error = "non-finite values" if np.isnan(self.error) else f"max error {self.error:.3g}"
        if labels:
            return f"{error} on probe theta '{labels[self.item % len(labels)]}'"
        return error


def _conventions(spatial, ac: int):
    """Per-dim size-1 coordinates to try (torch's first): only align_corners=1 has a choice."""
    ones = [i for i, d in enumerate(spatial) if d == 1] if ac else []
    for choice in itertools.product(SIZE_ONE, repeat=len(ones)):
        coords = [TORCH] * len(spatial)
        for i, c in zip(ones, choice):
            coords[i] = c
        yield tuple(coords), tuple((i, c) for i, c in zip(ones, choice) if c != TORCH)


def compare(grid: np.ndarray, theta: np.ndarray, acs, tol: tuple[float, float],
            nan_free: bool = False) -> Agreement | Disagreement:
    """``grid`` [B, *spatial, k] against affine_grid(theta) with theta [B or 1, k, k+1], each
    coordinate within ``atol + rtol * (|theta| . |base|)`` (``GRID_TOLERANCES``). ``nan_free``: a
    NaN coordinate is one the original leaves undefined, which any value refines (Alive2's rule for
    a rewrite: equal wherever the original is defined); every other coordinate must still agree."""
    atol, rtol = scaled(tol, grid.astype(np.float64))
    spatial = grid.shape[1:-1]
    th = np.broadcast_to(theta, (grid.shape[0], *theta.shape[1:])) if theta.shape[0] == 1 else theta
    got = grid.astype(np.float64)
    best, best_key = Disagreement(np.nan, 0), np.inf
    for ac in acs:
        for coords, moved in _conventions(spatial, ac):
            expected = affine_grid(th, spatial, bool(ac), coords)
            terms = affine_grid(th, spatial, bool(ac), coords, magnitudes=True)
            with np.errstate(invalid="ignore"):
                err = np.abs(got - expected)
                bad = ~(err <= atol + rtol * terms)  # NaN counts as bad
            if nan_free:
                bad &= ~np.isnan(got)
            if not bad.any():
                return Agreement(ac, moved)
            per_item = np.where(bad, np.nan_to_num(err, nan=np.inf), 0.0).reshape(grid.shape[0], -1).max(axis=1)
            worst = float(per_item.max())
            if worst < best_key or best_key == np.inf:
                best_key = worst
                best = Disagreement(np.nan if np.isinf(worst) else worst, int(per_item.argmax()))
    return best


def fit_items(grid: np.ndarray, align_corners: int, tol: tuple[float, float]) -> np.ndarray | None:
    """theta [N, k, k+1] with ``affine_grid(theta) == grid`` within ``tol``, or None."""
    k = grid.shape[-1]
    spatial = grid.shape[1:-1]
    if not np.all(np.isfinite(grid)):
        return None
    coords = affine_grid(np.eye(k, k + 1)[None], spatial, bool(align_corners)).reshape(-1, k)
    basis = np.concatenate([coords, np.ones((coords.shape[0], 1))], axis=1)
    target = grid.astype(np.float64).reshape(grid.shape[0], -1, k)
    theta = np.stack([np.linalg.lstsq(basis, g, rcond=None)[0].T for g in target])
    atol, rtol = scaled(tol, target)
    fitted = np.einsum("pj,nij->npi", basis, theta)
    return theta if np.all(np.abs(fitted - target) <= atol + rtol * np.abs(target)) else None
