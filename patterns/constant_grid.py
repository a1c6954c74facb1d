"""A grid known before run time (a folded or hand-made constant) is an affine grid when one theta
per batch item reproduces it: fit theta by least squares for each align_corners, and keep the
fit only when it is exact."""

from __future__ import annotations

import numpy as np

from surgeon import MatchContext, SurgeonError

from .analytic import ONNX, TORCH
from .probe import Verdict
from .reparam import fit_items
from .trace import Trace


def fit_constant_grid(ctx: MatchContext, trace: Trace, prefer_ac: int) -> tuple[Verdict, np.ndarray] | str:
    """(verdict, theta [N, k, k+1]) or why the constant grid is not an affine grid."""
    if trace.shape_leaves:
        return "the grid reads no theta and depends on input shapes"
    grid = ctx.constant(trace.grid)
    if grid is None:
        try:
            grid = ctx.evaluate([trace.grid], {})[0]
        except SurgeonError as exc:
            return f"the constant grid cannot be computed: {exc}"
    grid = np.asarray(grid)
    k = grid.shape[-1] if grid.ndim in (4, 5) else 0
    if k != grid.ndim - 2 or not np.issubdtype(grid.dtype, np.floating):
        return f"a constant of shape {list(grid.shape)} is not a grid"
    spatial = grid.shape[1:-1]
    for ac in (prefer_ac, 1 - prefer_ac):
        for convention in (TORCH, ONNX):
            if convention == ONNX and not (ac and 1 in spatial):
                continue
            theta = fit_items(grid, ac, convention)
            if theta is not None:
                n = grid.shape[0]
                verdict = Verdict(k=k, align_corners=ac, convention=convention, batch=("static", n),
                                  spatial=[("static", int(d)) for d in spatial], theta_batch=("static", n))
                return verdict, theta.astype(grid.dtype)
    return "the constant grid is not affine_grid(theta) for any theta"
