"""Backward of the two ops, built from torch's own backward kernels: the grid the forward never
materialised is made once here (by the fast affine_grid op), then torch's grid-sampler backward
runs on it, and theta's gradient is reduced from the grid's.  The cost over torch's own
backward is making that grid."""

from __future__ import annotations

import torch

aten = torch.ops.aten

MODE_CODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}  # at::native GridSamplerInterpolation
PADDING_CODES = {"zeros": 0, "border": 1, "reflection": 2}  # at::native GridSamplerPadding


def _base(n, align_corners: bool, like):
    """torch's base coordinates along a dim of n samples (linspace_from_neg_one)."""
    if n <= 1:
        return torch.zeros(1, dtype=like.dtype, device=like.device)
    r = torch.linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * (n - 1) / n


def theta_from_grid(grad_grid, spatial, align_corners: bool):
    """d loss / d theta from d loss / d grid.  torch's affine_grid backward is a bmm with the
    whole base grid and takes no symbolic sizes; the base grid is separable, so each column of
    theta's gradient is a reduction of the grid's gradient against one axis' coordinates."""
    k = len(spatial)
    g = grad_grid if grad_grid.dtype != torch.float16 else grad_grid.float()  # sum half in float
    cols = []
    for m in range(k):  # coordinate m (x, y, z) runs along spatial axis k - 1 - m
        axis = k - 1 - m
        along = g.sum(dim=[1 + a for a in range(k) if a != axis])  # [N, size, k]
        cols.append((along * _base(spatial[axis], align_corners, g)[:, None]).sum(1))
    cols.append(along.sum(1))  # the translation column, from the last partial sum
    return torch.stack(cols, dim=-1).to(grad_grid.dtype)  # [N, k, k + 1]


def fused(grad, x, theta, spatial, mode: str, padding_mode: str, align_corners: bool, need_x: bool, need_theta: bool):
    """(d x, d theta) of fused_grid_sample; None where not needed."""
    if not (need_x or need_theta):
        return None, None
    grid = torch.ops.surgeon.affine_grid(theta, spatial, align_corners)
    sampler_backward = aten.grid_sampler_2d_backward if theta.shape[1] == 2 else aten.grid_sampler_3d_backward
    # The mask skips the half that is not needed, as torch's own grid_sample backward does.
    grad_x, grad_grid = sampler_backward(grad, x, grid, MODE_CODES[mode], PADDING_CODES[padding_mode],
                                         align_corners, [need_x, need_theta])
    grad_theta = theta_from_grid(grad_grid, spatial, align_corners) if need_theta else None
    return (grad_x if need_x else None), grad_theta
