"""Gradients for x and theta: gradcheck in float64 (the op's float64 path is the numpy
reference) and float32 against torch's own pair on larger inputs."""

import numpy as np
import pytest
import torch

import surgeon_ops.torch as st

from ..error_bounds import assert_within, sum_bound
from .cases import COMBOS, assert_gradients_equal_torch, image, theta, torch_pair


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS)
def test_gradcheck_float64(nsp, mode, padding, ac):
    shape, out = ((1, 2, 4, 5), [3, 4]) if nsp == 2 else ((1, 1, 3, 4, 5), [2, 3, 4])
    x = image(shape, dtype=torch.float64).requires_grad_()
    t = theta(1, nsp, seed=3, dtype=torch.float64).requires_grad_()
    if mode == "nearest":  # piecewise constant in theta: only x has a gradient
        assert torch.autograd.gradcheck(lambda x: st.fused_grid_sample(x, t, out, mode, padding, ac), (x,))
    else:
        assert torch.autograd.gradcheck(lambda x, t: st.fused_grid_sample(x, t, out, mode, padding, ac), (x, t))


@pytest.mark.parametrize("nsp,mode,padding,ac", COMBOS[::2] + COMBOS[1::6])
def test_float32_gradients_equal_torch(nsp, mode, padding, ac):
    assert_gradients_equal_torch(nsp, mode, padding, ac)


def test_only_the_needed_gradient_is_computed():
    x, t = image((2, 3, 9, 8)), theta(2, 2)
    gx, = torch.autograd.grad(st.fused_grid_sample(x.requires_grad_(), t, [2, 3, 5, 6]).sum(), (x,))
    want, = torch.autograd.grad(torch_pair(x, t, [2, 3, 5, 6]).sum(), (x,))
    assert torch.equal(gx, want)
    t.requires_grad_()
    gt, = torch.autograd.grad(st.fused_grid_sample(x.detach(), t, [2, 3, 5, 6]).sum(), (t,))
    want, = torch.autograd.grad(torch_pair(x.detach(), t, [2, 3, 5, 6]).sum(), (t,))
    assert (gt - want).abs().max() <= 1e-4


def test_float16_gradients():
    x, t = image((1, 2, 16, 12)), theta(1, 2)
    xh, th = x.half().requires_grad_(), t.half().requires_grad_()
    gx, gt = torch.autograd.grad(st.fused_grid_sample(xh, th, [1, 2, 10, 11]).float().sum(), (xh, th))
    assert gx.dtype == torch.float16 and gt.dtype == torch.float16
    xf, tf = xh.detach().float().requires_grad_(), th.detach().float().requires_grad_()
    want_x, want_t = torch.autograd.grad(torch_pair(xf, tf, [1, 2, 10, 11]).sum(), (xf, tf))
    xt, tt = xh.detach().clone().requires_grad_(), th.detach().clone().requires_grad_()
    torch_x, torch_t = torch.autograd.grad(torch_pair(xt, tt, [1, 2, 10, 11]).float().sum(), (xt, tt))
    # as far from the float32 gradients as torch's own float16 pair is (its error is ~0.3%)
    assert (gx.float() - want_x).abs().max() <= 1.5 * (torch_x.float() - want_x).abs().max() + 1e-3
    assert (gt.float() - want_t).abs().max() <= 1.5 * (torch_t.float() - want_t).abs().max() + 1e-3


@pytest.mark.parametrize("nsp", (2, 3))
def test_affine_grid_gradients(nsp):
    size = [2, 1, 3, 4] if nsp == 2 else [2, 1, 2, 3, 4]
    t = theta(2, nsp, dtype=torch.float64).requires_grad_()
    for ac in (False, True):
        assert torch.autograd.gradcheck(lambda t: st.affine_grid(t, size, ac), (t,))
    t = theta(2, nsp).requires_grad_()
    size[2:] = [7] * nsp
    g = torch.nn.functional.affine_grid(t, size, align_corners=False)
    upstream = torch.randn(g.shape, generator=torch.Generator().manual_seed(1))
    got, = torch.autograd.grad(st.affine_grid(t, size), (t,), upstream)
    want, = torch.autograd.grad(g, (t,), upstream)
    # theta's gradient sums upstream * base coordinate (|base| <= 1) over every output
    outputs = upstream[0, ..., 0].numel()
    bound = sum_bound(upstream.abs().reshape(2, outputs, nsp).sum(1).numpy()[..., None], outputs + 3, np.float32)
    assert_within(got.numpy(), want.numpy(), bound, "theta's gradient")
