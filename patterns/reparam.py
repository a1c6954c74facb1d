"""Fitting theta to a grid, and affine maps of theta.

A grid can be ``affine_grid(theta')`` where ``theta'`` is an affine function of the model's theta
(torchvision's tensor ``affine`` divides a pixel-space matrix by ``[W/2, H/2]`` inside the grid),
or a constant (a grid with no theta at all). Per item, ``theta'`` is fitted to the grid by least
squares (exactly, or not at all); over enough probe thetas the map ``theta -> theta'`` is fitted
too. Fits use torch's convention for size-1 dims: an ONNX-style -1 there is absorbed into the
translation, so the map or constant already compensates for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analytic import affine_grid
from .verify import scaled


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


@dataclass
class ThetaMap:
    """theta' = theta_flat @ weight + bias, theta' flattened [k * (k+1)]."""

    weight: np.ndarray  # [p, q]
    bias: np.ndarray  # [q]

    def apply(self, theta: np.ndarray, k: int) -> np.ndarray:
        flat = theta.reshape(theta.shape[0], int(np.prod(theta.shape[1:]))).astype(np.float64)  # 0 items too
        return (flat @ self.weight + self.bias).reshape(theta.shape[0], k, k + 1)


def fit_map(thetas: np.ndarray, targets: np.ndarray, tol: tuple[float, float]) -> ThetaMap | None:
    """The affine map from flattened thetas [n, p] to flattened fitted thetas [n, q], when one
    explains every sample (n must exceed p + 1 for the fit to be a check)."""
    if thetas.shape[0] < thetas.shape[1] + 2:
        return None
    design = np.concatenate([thetas, np.ones((thetas.shape[0], 1))], axis=1)
    solution = np.linalg.lstsq(design, targets, rcond=None)[0]
    atol, rtol = scaled(tol, targets)
    if not np.all(np.abs(design @ solution - targets) <= 10 * (atol + rtol * np.abs(targets))):
        return None
    weight, bias = solution[:-1], solution[-1]
    noise = 1e-6 * max(float(np.abs(solution).max(initial=0.0)), 1e-30)  # of float32 grids, relative to the map
    weight[np.abs(weight) < noise] = 0.0
    bias[np.abs(bias) < noise] = 0.0
    return ThetaMap(weight, bias)
