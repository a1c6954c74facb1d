"""The public functions: torch's signatures, checked arguments, and the route each call takes:
eager / torch.compile / torch.export -> the surgeon:: operators; torch.onnx.export (dynamo) ->
the contract's node through torch.onnx.ops.symbolic; a TorchScript trace (torch.onnx.export with
dynamo=False, torch.jit.trace) -> an autograd.Function with an ONNX symbolic."""

from __future__ import annotations

import torch

from . import _checks, _export_dynamo, _export_ts, _ops  # noqa: F401  (_ops registers the operators)

_FUSED = "surgeon.torch.fused_grid_sample()"
_GRID = "surgeon.torch.affine_grid()"


def fused_grid_sample(x, theta, size=None, mode="bilinear", padding_mode="zeros", align_corners=False):
    """F.grid_sample(x, F.affine_grid(theta, size, align_corners), mode, padding_mode,
    align_corners), without materialising the grid.

    x: [N, C, H, W] or [N, C, D, H, W], float32 or float16 (float64 on the CPU: the slow
    reference path, meant for gradcheck); theta: [N, 2, 3] / [N, 3, 4], x's dtype and device.
    size: what F.affine_grid takes ([N, C, H_out, W_out], torch.Size or list, e.g. x.size()),
    or just the spatial output size; None means x's own spatial size.  bicubic is 2-D only.
    Differentiable in x and theta.
    """
    spatial = _ops.plain_call(x, theta, size, mode, padding_mode, align_corners)
    if spatial is not None:  # valid at a glance, nothing to record: the kernel without the dispatch
        return _ops.fused_cpu(x, theta, spatial, mode, padding_mode, align_corners)
    align_corners = _checks.options(_FUSED, mode, padding_mode, align_corners)
    nsp = _checks.sample(_FUSED, x, theta, mode)
    spatial, _ = _checks.spatial(_FUSED, x.shape if size is None else size, nsp, theta.shape[0])
    if torch.jit.is_tracing():
        return _export_ts.FusedGridSample.apply(x, theta, mode, padding_mode, align_corners, *spatial)
    if _ops.onnx_exporting():
        return _export_dynamo.fused_grid_sample(x, theta, spatial, mode, padding_mode, align_corners)
    if _ops.plain_eager_cpu(x, theta):  # nothing to record: the kernel without the dispatch
        return _ops.fused_cpu(x, theta, spatial, mode, padding_mode, align_corners)
    return torch.ops.surgeon.fused_grid_sample(x, theta, spatial, mode, padding_mode, align_corners)


def affine_grid(theta, size, align_corners=False):
    """F.affine_grid(theta, size, align_corners): the sampling grid [N, H, W, 2] /
    [N, D, H, W, 3] in theta's dtype.  size: torch's [N, C, H, W] / [N, C, D, H, W] (or just
    the spatial size).  Differentiable in theta."""
    align_corners = _checks.flag(_GRID, align_corners)
    nsp = _checks.theta_dims(_GRID, theta)
    spatial, lead = _checks.spatial(_GRID, size, nsp, theta.shape[0])
    if torch.jit.is_tracing():
        return _export_ts.AffineGrid.apply(theta, align_corners, *(spatial if lead is None else lead + spatial))
    if _ops.onnx_exporting():
        return _export_dynamo.affine_grid(theta, spatial, lead, align_corners)
    return torch.ops.surgeon.affine_grid(theta, spatial, align_corners)
