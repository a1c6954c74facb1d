"""Shared inputs of the surgeon.torch tests: every (dims, mode, padding, align_corners) the op
supports, small random cases, and torch's own pair as the reference."""

from __future__ import annotations

import warnings

import numpy as np
import torch
import torch.nn.functional as F

from ..error_bounds import assert_within, grid_sample_bound, grid_sample_grad_bounds, unit_roundoff

COMBOS = [(2, m, p, ac) for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")
          for ac in (False, True)] + \
         [(3, m, p, ac) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
          for ac in (False, True)]


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


def assert_equals_torch(got, x, theta, size, mode="bilinear", padding="zeros", align_corners=False, what=""):
    """``got`` against torch's pair on the same inputs, within the bound of two computations of
    it (tests/error_bounds.py); a float16 ``got`` is torch's float32 pair rounded once more."""
    x32, t32 = x.detach().float(), theta.detach().float()
    want = torch_pair(x32, t32, size, mode, padding, align_corners).numpy()
    nsp = x.dim() - 2
    bound = grid_sample_bound(x32.numpy(), t32.numpy(), list(size)[-nsp:], mode, padding, align_corners)
    if got.dtype == torch.float16:
        bound = bound + unit_roundoff(np.float16) * np.abs(want)
    assert tuple(got.shape) == want.shape, what
    assert_within(got.detach().float().cpu().numpy(), want, bound, what)


def assert_gradients_equal_torch(nsp, mode, padding, align_corners, device="cpu"):
    """x's and theta's gradients of the op against torch's pair's, each within the bound of two
    computations of it. Outputs few enough that none sits within rounding of a kink of linear's
    slope, where theta's gradient may legitimately jump (tests/error_bounds.py): the bound stays
    under a fifth of the gradient (bilinear: 2 %; bicubic's weights round the most: 16 %), so a
    wrong term still fails."""
    import surgeon_ops.torch as st

    shape, out = ((2, 3, 40, 50), (12, 15)) if nsp == 2 else ((2, 2, 10, 12, 14), (5, 6, 7))
    x = image(shape, device=device).requires_grad_()
    t = theta(2, nsp, seed=5, device=device).requires_grad_()
    size = shape[:2] + out
    y = st.fused_grid_sample(x, t, size, mode, padding, align_corners)
    upstream = torch.randn(y.shape, generator=torch.Generator().manual_seed(0)).to(device)
    gx, gt = torch.autograd.grad(y, (x, t), upstream)
    want_x, want_t = torch.autograd.grad(torch_pair(x, t, size, mode, padding, align_corners), (x, t), upstream)
    host = [v.detach().cpu().numpy() for v in (x, t, upstream, gx, gt, want_x, want_t)]
    bound_x, bound_t = grid_sample_grad_bounds(*host[:3], out, mode, padding, align_corners)
    assert bound_t.max() <= 0.2 * np.abs(host[6]).max() or mode == "nearest"
    assert_within(host[3], host[5], bound_x, "x's gradient")
    assert_within(host[4], host[6], bound_t, "theta's gradient")
