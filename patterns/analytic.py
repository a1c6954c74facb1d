"""The analytic affine grid, in numpy: what a region must compute to count as an affine grid;
and theta fitted to a grid (exactly, or not at all), with torch's size-1 convention (an
ONNX-style -1 there is absorbed into the translation, so a fitted theta compensates for it).

With ``align_corners=1`` the single coordinate of a size-1 dim is a matter of convention: torch's
``F.affine_grid`` (the contract) puts it at 0, ONNX's reference ``AffineGrid`` (and numpy's
``linspace(-1, 1, 1)``) at -1, onnxruntime's ``AffineGrid`` (1.32, measured) at +1. A grid is
described by that coordinate, for all dims or one per spatial dim; everywhere else they agree.
"""

from __future__ import annotations

import numpy as np

from surgeon.recognise import scaled

TORCH, ONNX, ORT = 0.0, -1.0, 1.0  # the coordinate of a size-1 dim with align_corners=1
SIZE_ONE = (TORCH, ONNX, ORT)


def base_coords(n: int, align_corners: bool, size_one: float = TORCH) -> np.ndarray:
    """Normalised pixel-centre coordinates of one axis of length ``n``, in float64."""
    if n <= 1:
        return np.full(max(n, 0), size_one if (n == 1 and align_corners) else 0.0)
    coords = np.linspace(-1.0, 1.0, n)
    return coords if align_corners else coords * (n - 1) / n


def affine_grid(theta: np.ndarray, spatial, align_corners: bool, size_one=TORCH, magnitudes=False) -> np.ndarray:
    """``[N, *spatial, k]`` grid of ``theta`` (``[N, k, k+1]``), float64.

    ``spatial`` is ``(H, W)`` or ``(D, H, W)``; the last grid channel is x (along W), as in torch.
    ``size_one``: the size-1 coordinate, for every dim or one per spatial dim (``spatial``'s order).
    ``magnitudes``: the sum of the terms' magnitudes instead, ``|theta| . |base|`` (what rounding
    scales with).
    """
    theta = np.asarray(theta, dtype=np.float64)
    spatial = [int(s) for s in spatial]
    per_dim = [float(size_one)] * len(spatial) if np.isscalar(size_one) else list(size_one)
    axes = [base_coords(n, align_corners, c) for n, c in zip(reversed(spatial), reversed(per_dim))]  # x, y(, z)
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # each [*spatial], ordered (z,) y, x
    base = np.stack(list(reversed(mesh)) + [np.ones(spatial)], axis=-1)  # [*spatial, k+1]
    flat = base.reshape(-1, base.shape[-1])
    if magnitudes:
        flat, theta = np.abs(flat), np.abs(theta)
    grid = np.einsum("pj,nij->npi", flat, theta)
    return grid.reshape([theta.shape[0], *spatial, theta.shape[1]])


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
