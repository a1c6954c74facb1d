"""The torch operators surgeon::fused_grid_sample and surgeon::affine_grid: the compiled kernels
(surgeon_ops.kernels: C++ on CPU tensors, CUDA on torch's current stream) as real operators, with
fake implementations (torch.compile, torch.export) and autograd.

`size` here is the spatial output size only; surgeon.torch's public functions take torch's full
size and check the arguments before they get here."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from surgeon_ops import kernels

from . import _checks, _grad


def _threads(t: torch.Tensor):
    """CPU kernels use torch's intra-op thread count (torch.set_num_threads), as torch's ops do."""
    return torch.get_num_threads() if t.device.type == "cpu" else None


@torch.library.custom_op("surgeon::fused_grid_sample", mutates_args=(), device_types=("cpu", "cuda"))
def fused_grid_sample(x: torch.Tensor, theta: torch.Tensor, size: Sequence[int], mode: str, padding_mode: str,
                      align_corners: bool) -> torch.Tensor:
    return kernels.fused_grid_sample(x, theta, list(size), mode, padding_mode, align_corners,
                                     num_threads=_threads(x))


@fused_grid_sample.register_fake
def _(x, theta, size, mode, padding_mode, align_corners):
    _checks.sample("surgeon::fused_grid_sample", x, theta, mode)
    return x.new_empty((x.shape[0], x.shape[1], *size))


def _setup_fused(ctx, inputs, output):
    x, theta, size, mode, padding_mode, align_corners = inputs
    ctx.save_for_backward(x, theta)
    ctx.args = (list(size), mode, padding_mode, align_corners)


def _backward_fused(ctx, grad):
    x, theta = ctx.saved_tensors
    need_x, need_theta = ctx.needs_input_grad[:2]
    grad_x, grad_theta = _grad.fused(grad, x, theta, *ctx.args, need_x, need_theta)
    return grad_x, grad_theta, None, None, None, None


fused_grid_sample.register_autograd(_backward_fused, setup_context=_setup_fused)


@torch.library.custom_op("surgeon::affine_grid", mutates_args=(), device_types=("cpu", "cuda"))
def affine_grid(theta: torch.Tensor, size: Sequence[int], align_corners: bool) -> torch.Tensor:
    return kernels.affine_grid(theta, list(size), align_corners, num_threads=_threads(theta))


@affine_grid.register_fake
def _(theta, size, align_corners):
    nsp = _checks.theta_dims("surgeon::affine_grid", theta)
    return theta.new_empty((theta.shape[0], *size, nsp))


def _setup_grid(ctx, inputs, output):
    theta, size, align_corners = inputs
    ctx.args = (list(size), align_corners)


def _backward_grid(ctx, grad):
    return _grad.theta_from_grid(grad, *ctx.args), None, None


affine_grid.register_autograd(_backward_grid, setup_context=_setup_grid)
