"""Grid spellings seen in libraries (kornia-like) and the negatives.

Each builds a grid that is mathematically torch's affine_grid (or, for the negatives, is not),
but through different ops, so the exported graphs hold the shapes pattern authors must match.
"""
import torch
import torch.nn.functional as F

from samples.sample_models import SamplerModule


def lin(n, align_corners):
    """torch's normalised pixel coordinates along one axis, via linspace as kornia writes it."""
    xs = torch.linspace(-1.0, 1.0, n)
    return xs if align_corners else xs * ((n - 1) / n)


def base_hw3(h, w, align_corners):
    """Homogeneous base grid [H*W, 3] with rows (x, y, 1): what affine_grid multiplies."""
    gy, gx = torch.meshgrid(lin(h, align_corners), lin(w, align_corners), indexing="ij")
    return torch.stack([gx, gy, torch.ones_like(gx)], -1).reshape(h * w, 3)


class LibElementwise(SamplerModule):
    """Run-time linspace/meshgrid base, then x' = t00*x + t01*y + t02 one coefficient at a time."""

    def grid(self, x, t):
        h, w = x.shape[-2:]
        gy, gx = torch.meshgrid(lin(h, self.ac), lin(w, self.ac), indexing="ij")
        c = [[t[:, r, k].view(-1, 1, 1) for k in range(3)] for r in range(2)]
        u = c[0][0] * gx + c[0][1] * gy + c[0][2]
        v = c[1][0] * gx + c[1][1] * gy + c[1][2]
        return torch.stack([u, v], -1)

    def forward(self, x, theta):
        return self.sample(x, self.grid(x, theta))


class LibHomogeneous(LibElementwise):
    """Same spelling fed a 3x3 homogeneous matrix M; only its first two rows are read."""

    def forward(self, x, M):
        return self.sample(x, self.grid(x, M))


class LibMatmul(SamplerModule):
    """Constant homogeneous base [H*W, 3] @ theta^T through MatMul; H/W fixed at build time."""

    def __init__(self, hw, **kw):
        super().__init__(**kw)
        self.hw = hw
        self.register_buffer("base", base_hw3(*hw, self.ac))

    def forward(self, x, theta):
        grid = (self.base @ theta.transpose(1, 2)).view(-1, self.hw[0], self.hw[1], 2)
        return self.sample(x, grid)


class AffineExpand(SamplerModule):
    """One theta (batch 1) for the whole image batch: the grid is expanded before sampling."""

    def forward(self, x, theta):
        n, c, h, w = x.shape
        grid = F.affine_grid(theta, (1, c, h, w), align_corners=self.ac)
        return self.sample(x, grid.expand(n, -1, -1, -1))


class AffineNoopReshape(SamplerModule):
    """A reshape to the grid's own shape between grid and sampler (exporters leave such things)."""

    def forward(self, x, theta):
        grid = F.affine_grid(theta, x.size(), align_corners=self.ac)
        return self.sample(x, grid.reshape(-1, x.size(2), x.size(3), 2))


class FlowWarpModule(SamplerModule):
    """Negative: identity grid plus a dense flow field; the grid is not an affine function."""

    def __init__(self, hw, **kw):
        super().__init__(**kw)
        self.register_buffer("base", base_hw3(*hw, self.ac)[:, :2].reshape(1, *hw, 2))

    def forward(self, x, flow):
        return self.sample(x, self.base + flow.permute(0, 2, 3, 1))


class NonAffineGrid(SamplerModule):
    """Negative: tanh of an affine grid before sampling (no theta' reproduces it). Tanh, not
    a cube: a cube amplifies ORT's and torch's last-bit grid differences past 1e-5."""

    def forward(self, x, theta):
        return self.sample(x, torch.tanh(F.affine_grid(theta, x.size(), align_corners=self.ac)))


class GridInput(SamplerModule):
    """Negative: the grid is a model input; there is no theta to fuse."""

    def forward(self, x, grid):
        return self.sample(x, grid)


class MultiChain(SamplerModule):
    """Three chains: two share theta; the third's grid is also a model output."""

    def forward(self, x, theta, theta2):
        n, c = x.shape[:2]
        y = self.sample(x, F.affine_grid(theta, x.size(), align_corners=False))
        g_small = F.affine_grid(theta, (n, c, 12, 10), align_corners=True)
        y_small = F.grid_sample(x, g_small, padding_mode="border", align_corners=True)
        g3 = F.affine_grid(theta2, x.size(), align_corners=False)
        y_nearest = F.grid_sample(x, g3, mode="nearest", align_corners=False)
        return y, y_small, y_nearest, g3


class IfBranch(SamplerModule):
    """Reference for the hand-built If model: warp when cond, else pass x through."""

    def forward(self, x, theta, cond):
        if bool(cond):
            return self.sample(x, F.affine_grid(theta, x.size(), align_corners=self.ac))
        return x


class CondBranch(SamplerModule):
    """torch.cond version of IfBranch: the dynamo exporter turns it into an If node whose
    then-branch holds the decomposed chain (base grid initializer in the outer graph)."""

    def forward(self, x, theta, cond):
        def warp(x, theta):
            return self.sample(x, F.affine_grid(theta, x.size(), align_corners=self.ac))

        def keep(x, theta):
            return x.clone()

        if not torch.compiler.is_exporting():   # eager torch.cond compiles: ~3 s per call
            return warp(x, theta) if bool(cond) else keep(x, theta)
        return torch.cond(cond, warp, keep, (x, theta))
