"""Modules behind the issue-20 samples: sizes given as data, grids that read no theta, theta
computed by heads and matrix chains, library spellings (torchvision-, MONAI-, registration-like),
float16 pipelines, and the silent-wrong traps (non-linear ops on theta elements, size-1 dims,
a symbol shared by two dims).

Third-party-style code is written here, in the libraries' manner, not imported from them.
"""
import math
import warnings

import torch
import torch.nn.functional as F

from samples.lib_models import lin
from samples.sample_models import AffineGridFn, SamplerModule


# -- sizes given as data -------------------------------------------------------------------------

class SeedSizeInput(SamplerModule):
    """The seed article's recipe with the size a model input (int64 [4])."""

    def forward(self, x, theta, size):
        return self.sample(x, AffineGridFn.apply(theta, size))


class SeedSizeFromReference(SamplerModule):
    """The seed recipe with the size cut from two inputs' shapes: N, C of x, H, W of ``ref``."""

    def forward(self, x, theta, ref):
        size = torch.cat([torch._shape_as_tensor(x)[:2], torch._shape_as_tensor(ref)[2:]])
        return self.sample(x, AffineGridFn.apply(theta, size))


# -- grids that read no theta --------------------------------------------------------------------

def tv_inverse_affine(angle, translate, scale, shear, center=(0.0, 0.0)):
    """torchvision's _get_inverse_affine_matrix: the pixel-space inverse of
    translate . rotate/shear/scale about the centre, as 6 Python floats."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    matrix = [d, -b, 0.0, -c, a, 0.0]
    matrix = [m / scale for m in matrix]
    matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
    matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
    matrix[2] += cx
    matrix[5] += cy
    return matrix


def tv_affine_grid(theta, w, h, ow, oh):
    """torchvision's _gen_affine_grid: a pixel-centre base grid times theta rescaled by the size."""
    d = 0.5
    base_grid = torch.empty(1, oh, ow, 3, dtype=theta.dtype)
    x_grid = torch.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow)
    base_grid[..., 0].copy_(x_grid)
    y_grid = torch.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh).unsqueeze_(-1)
    base_grid[..., 1].copy_(y_grid)
    base_grid[..., 2].fill_(1)
    rescaled_theta = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=theta.dtype)
    output_grid = base_grid.view(1, oh * ow, 3).bmm(rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


class TvRotate(SamplerModule):
    """torchvision.transforms.functional.rotate on a tensor batch, written out: a fixed angle,
    the grid from the image's static size, expanded to the batch before sampling."""

    def __init__(self, angle=30.0, **kw):
        super().__init__(**kw)
        self.angle = angle

    def forward(self, x):
        h, w = x.shape[-2:]
        matrix = tv_inverse_affine(-self.angle, (0.0, 0.0), 1.0, (0.0, 0.0))
        theta = torch.tensor(matrix, dtype=x.dtype).reshape(1, 2, 3)
        grid = tv_affine_grid(theta, w=w, h=h, ow=w, oh=h)
        grid = grid.expand(x.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
        return self.sample(x, grid)


class FixedZoomTile(SamplerModule):
    """A fixed theta buffer (batch 1), its grid repeated over the batch with ``repeat`` (Tile)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.register_buffer("theta", torch.tensor([[[0.6, -0.2, 0.1], [0.15, 0.7, -0.05]]]))

    def forward(self, x):
        n, c, h, w = x.shape
        grid = F.affine_grid(self.theta, (1, c, h, w), align_corners=self.ac)
        return self.sample(x, grid.repeat(n, 1, 1, 1))


def pixel_centres(n):
    """Normalised pixel centres (2i + 1) / n - 1 (align_corners=False): finite at n = 1, unlike
    linspace(-1, 1, n) * (n - 1) / n, whose export divides 0 by 0 there."""
    return (torch.arange(n) * 2 + 1) / n - 1


class SecondWarp(SamplerModule):
    """Two warps: an affine one by theta, then a fixed zoom whose grid is built from the first
    warp's output shape only (a meshgrid at run time, scaled)."""

    def forward(self, x, theta):
        y = self.sample(x, F.affine_grid(theta, x.size(), align_corners=self.ac))
        h, w = y.shape[-2:]
        gy, gx = torch.meshgrid(pixel_centres(h), pixel_centres(w), indexing="ij")
        grid = torch.stack([0.5 * gx + 0.1, 0.5 * gy], -1).unsqueeze(0).expand(y.shape[0], -1, -1, -1)
        return self.sample(y, grid)


# -- theta computed in the graph, grids of other spellings ----------------------------------------

class ChainedMatrices(SamplerModule):
    """theta = (translate @ rotate @ scale)[:, :2] built from per-item parameters: a chain of
    homogeneous matrix products ahead of affine_grid."""

    def forward(self, x, angle, shift, scale):
        n = angle.shape[0]
        c, s = torch.cos(angle), torch.sin(angle)
        zero, one = torch.zeros_like(angle), torch.ones_like(angle)
        rotate = torch.stack([c, -s, zero, s, c, zero, zero, zero, one], 1).view(n, 3, 3)
        scaling = torch.stack([scale, zero, zero, zero, scale, zero, zero, zero, one], 1).view(n, 3, 3)
        translate = torch.stack([one, zero, shift[:, 0], zero, one, shift[:, 1], zero, zero, one], 1).view(n, 3, 3)
        theta = (translate @ rotate @ scaling)[:, :2]
        return self.sample(x, F.affine_grid(theta, x.size(), align_corners=self.ac))


class EinsumGrid(SamplerModule):
    """grid = einsum('nij,hwj->nhwi', theta, base): the homogeneous base as a constant."""

    def __init__(self, hw, **kw):
        super().__init__(**kw)
        gy, gx = torch.meshgrid(lin(hw[0], self.ac), lin(hw[1], self.ac), indexing="ij")
        self.register_buffer("base", torch.stack([gx, gy, torch.ones_like(gx)], -1))

    def forward(self, x, theta):
        return self.sample(x, torch.einsum("nij,hwj->nhwi", theta, self.base))


class DisplacementGrid(SamplerModule):
    """Registration style: the displacement (affine grid minus identity) added back to the
    identity grid before sampling."""

    def forward(self, x, theta):
        n = x.shape[0]
        identity = F.affine_grid(torch.eye(2, 3).unsqueeze(0).expand(n, -1, -1), x.size(), align_corners=self.ac)
        displacement = F.affine_grid(theta, x.size(), align_corners=self.ac) - identity
        return self.sample(x, identity + displacement)


class MonaiResample(SamplerModule):
    """MONAI-like Resample: a homogeneous pixel-space affine on a (row, col) pixel grid centred on
    the image, normalised in place per axis, axes moved last and their order reversed."""

    def __init__(self, hw, **kw):
        super().__init__(align_corners=True, **kw)
        h, w = hw
        rows, cols = torch.meshgrid(torch.arange(h) - (h - 1) / 2, torch.arange(w) - (w - 1) / 2, indexing="ij")
        self.register_buffer("pixels", torch.stack([rows, cols, torch.ones_like(rows)]).float())  # [3, H, W]

    def forward(self, x, affine):
        n = x.shape[0]
        grid = (affine @ self.pixels.reshape(1, 3, -1)).reshape(n, 3, *self.pixels.shape[1:])
        grid = grid[:, :2].clone()
        for i, dim in enumerate(x.shape[2:]):  # in place, as MONAI does: index_put -> ScatterND
            grid[:, i] = grid[:, i] * (2.0 / (dim - 1.0))
        grid = grid.permute(0, 2, 3, 1)[..., [1, 0]]  # (row, col) -> (x, y): a Gather
        return self.sample(x, grid)


class HalfPrecisionGrid(SamplerModule):
    """A float16 pipeline: theta cast to half, the grid computed in half through a MatMul with a
    constant base, cast back for a float32 sampler."""

    def __init__(self, hw, **kw):
        super().__init__(**kw)
        gy, gx = torch.meshgrid(lin(hw[0], self.ac), lin(hw[1], self.ac), indexing="ij")
        self.register_buffer("base", torch.stack([gx, gy, torch.ones_like(gx)], -1).reshape(-1, 3).half())
        self.hw = hw

    def forward(self, x, theta):
        grid = (self.base @ theta.half().transpose(1, 2)).view(-1, *self.hw, 2)
        return self.sample(x, grid.float())


# -- the silent-wrong traps -----------------------------------------------------------------------

class ElementwiseOp(SamplerModule):
    """kornia-like elementwise grid with a non-linear op on one theta coefficient: the identity
    near the identity matrix, so probes that never leave it took it for affine."""

    def __init__(self, op="abs", **kw):
        super().__init__(**kw)
        self.op = op

    def forward(self, x, theta):
        h, w = x.shape[-2:]
        gy, gx = torch.meshgrid(lin(h, self.ac), lin(w, self.ac), indexing="ij")
        c = [[theta[:, r, k].view(-1, 1, 1) for k in range(3)] for r in range(2)]
        if self.op == "abs":
            c[0][0] = c[0][0].abs()
        elif self.op == "clamp":  # the translation clamped to the image: exact for small shifts only
            c[0][2] = c[0][2].clamp(-1.0, 1.0)
        u = c[0][0] * gx + c[0][1] * gy + c[0][2]
        v = c[1][0] * gx + c[1][1] * gy + c[1][2]
        return self.sample(x, torch.stack([u, v], -1))


class SizeOneRows(SamplerModule):
    """affine_grid to a single output row (a line profile), align_corners=True: torch, ONNX and
    onnxruntime put that row's coordinate at 0, -1 and +1."""

    def __init__(self, out_w=12, dynamic=False, **kw):
        super().__init__(align_corners=True, **kw)
        self.out_w, self.dynamic = out_w, dynamic

    def forward(self, x, theta):
        size = x.size() if self.dynamic else (x.size(0), x.size(1), 1, self.out_w)
        with warnings.catch_warnings():  # torch warns that unit-size grids are not an intended use
            warnings.simplefilter("ignore", UserWarning)
            grid = F.affine_grid(theta, size, align_corners=True)
        return self.sample(x, grid)
