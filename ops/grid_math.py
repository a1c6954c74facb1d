"""torch's affine grid in float64 numpy, and the size-1 conventions engines differ on: what a
region must compute to count as an affine grid, and the base grid the ONNX decomposition bakes.

With ``align_corners=1`` the single coordinate of a size-1 dim is a matter of convention: torch's
``F.affine_grid`` (the contract) puts it at 0, ONNX's reference ``AffineGrid`` (and numpy's
``linspace(-1, 1, 1)``) at -1, onnxruntime's ``AffineGrid`` (1.32, measured) at +1. A grid is
described by that coordinate, for all dims or one per spatial dim; everywhere else they agree.
"""

from __future__ import annotations

import numpy as np

TORCH, ONNX, ORT = 0.0, -1.0, 1.0  # the coordinate of a size-1 dim with align_corners=1
SIZE_ONE = (TORCH, ONNX, ORT)


def base_coords(n: int, align_corners: bool, size_one: float = TORCH) -> np.ndarray:
    """Normalised pixel-centre coordinates of one axis of length ``n``."""
    if n <= 1:
        return np.full(max(n, 0), size_one if (n == 1 and align_corners) else 0.0)
    coords = np.linspace(-1.0, 1.0, n)
    return coords if align_corners else coords * (n - 1) / n


def base_grid(spatial, align_corners: bool, size_one=TORCH) -> np.ndarray:
    """``[*spatial, k+1]``: x (along the last axis), y, (z), 1 per output position. ``size_one``:
    the size-1 coordinate, for every dim or one per spatial dim (``spatial``'s order)."""
    spatial = [int(s) for s in spatial]
    per_dim = [float(size_one)] * len(spatial) if np.isscalar(size_one) else list(size_one)
    axes = [base_coords(n, align_corners, c) for n, c in zip(spatial, per_dim)]
    mesh = np.meshgrid(*axes, indexing="ij") if axes else []
    return np.stack(list(reversed(mesh)) + [np.ones(spatial)], axis=-1)


def affine_grid(theta: np.ndarray, spatial, align_corners: bool, size_one=TORCH, magnitudes=False) -> np.ndarray:
    """``[N, *spatial, k]`` grid of ``theta`` (``[N, k, k+1]``); ``spatial`` is ``(H, W)`` or
    ``(D, H, W)``, the last grid channel x (along W), as in torch. ``magnitudes``: the sum of the
    terms' magnitudes instead, ``|theta| . |base|`` (what rounding scales with)."""
    theta = np.asarray(theta, dtype=np.float64)
    base = base_grid(spatial, align_corners, size_one)
    flat = base.reshape(-1, base.shape[-1])
    if magnitudes:
        flat, theta = np.abs(flat), np.abs(theta)
    grid = np.einsum("pj,nij->npi", flat, theta)
    return grid.reshape([theta.shape[0], *base.shape[:-1], theta.shape[1]])
