"""The analytic affine grid, in numpy: what a region must compute to count as an affine grid.

torch's ``F.affine_grid`` puts the single coordinate of a size-1 dim at 0 whatever
``align_corners``; ONNX's ``AffineGrid`` (and onnxruntime) put it at -1 when ``align_corners=1``.
``convention`` picks one; the two agree everywhere else.
"""

from __future__ import annotations

import numpy as np

TORCH, ONNX = "torch", "onnx"


def base_coords(n: int, align_corners: bool, convention: str = TORCH) -> np.ndarray:
    """Normalised pixel-centre coordinates of one axis of length ``n``, in float64."""
    if n <= 1:
        value = -1.0 if (n == 1 and align_corners and convention == ONNX) else 0.0
        return np.full(max(n, 0), value)
    coords = np.linspace(-1.0, 1.0, n)
    return coords if align_corners else coords * (n - 1) / n


def affine_grid(theta: np.ndarray, spatial, align_corners: bool, convention: str = TORCH) -> np.ndarray:
    """``[N, *spatial, k]`` grid of ``theta`` (``[N, k, k+1]``), float64.

    ``spatial`` is ``(H, W)`` or ``(D, H, W)``; the last grid channel is x (along W), as in torch.
    """
    theta = np.asarray(theta, dtype=np.float64)
    spatial = [int(s) for s in spatial]
    axes = [base_coords(n, align_corners, convention) for n in reversed(spatial)]  # x, y(, z)
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # each [*spatial], ordered (z,) y, x
    base = np.stack(list(reversed(mesh)) + [np.ones(spatial)], axis=-1)  # [*spatial, k+1]
    flat = base.reshape(-1, base.shape[-1])
    grid = np.einsum("pj,nij->npi", flat, theta)
    return grid.reshape([theta.shape[0], *spatial, theta.shape[1]])
