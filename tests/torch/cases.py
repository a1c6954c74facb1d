"""Shared inputs of the surgeon.torch tests: every (dims, mode, padding, align_corners) the op
supports, small random cases, and torch's own pair as the reference."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F

COMBOS = [(2, m, p, ac) for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")
          for ac in (False, True)] + \
         [(3, m, p, ac) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
          for ac in (False, True)]


def tolerance(mode: str) -> float:
    return 1e-4 if mode == "bicubic" else 1e-5  # the contract's, as tests/kernels use


def theta(n: int, nsp: int, scale: float = 0.25, seed: int = 0, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    eye = torch.eye(nsp, nsp + 1, dtype=torch.float64)
    return (eye + scale * torch.randn(n, nsp, nsp + 1, generator=g, dtype=torch.float64)).to(dtype).to(device)


def image(shape, seed: int = 1, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=torch.float64).to(dtype).to(device)


def shapes(nsp: int):
    """(x shape, output spatial size) pairs: odd sizes, up- and down-sampling, size-1 dims."""
    if nsp == 2:
        return [((2, 3, 7, 9), (5, 11)), ((1, 2, 12, 10), (25, 21)), ((2, 1, 1, 6), (4, 1)), ((3, 11, 9, 8), (6, 13))]
    return [((2, 2, 3, 7, 9), (2, 5, 11)), ((1, 3, 4, 6, 5), (5, 7, 6)), ((2, 1, 1, 1, 6), (3, 4, 1))]


def torch_pair(x, theta, size, mode="bilinear", padding_mode="zeros", align_corners=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about size-1 grids with align_corners
        grid = F.affine_grid(theta, size, align_corners=align_corners)
        return F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
