"""The torch modules behind every sample model.

Kept apart from the export script so tests can rebuild a module and compare its forward with
onnxruntime without running any exporter. Parameters are filled from numpy's PCG64 (stable
across numpy and torch versions), not from torch's RNG, so a rebuilt module matches the
weights stored in the checked-in .onnx files.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def init_params(module, seed):
    """Deterministic weights that do not depend on torch's RNG stream."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
            vals = rng.standard_normal(tuple(p.shape)) / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(vals.astype(np.float32)))
    return module


class SamplerModule(nn.Module):
    """Holds grid_sample's settings; subclasses build the grid in different spellings."""

    def __init__(self, align_corners=False, mode="bilinear", padding_mode="zeros"):
        super().__init__()
        self.ac, self.mode, self.pad = align_corners, mode, padding_mode

    def sample(self, x, grid):
        return F.grid_sample(x, grid, mode=self.mode, padding_mode=self.pad,
                             align_corners=self.ac)


class AffineSample(SamplerModule):
    """The plain chain: affine_grid(theta, size) -> grid_sample. out_hw fixes H/W (or D/H/W)."""

    def __init__(self, out_hw=None, **kw):
        super().__init__(**kw)
        self.out_hw = out_hw

    def forward(self, x, theta):
        size = x.size() if self.out_hw is None else (x.size(0), x.size(1), *self.out_hw)
        return self.sample(x, F.affine_grid(theta, size, align_corners=self.ac))


class STN(nn.Module):
    """Spatial-transformer classifier after the PyTorch STN tutorial, shrunk: 1x28x28 input."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(
            nn.Conv2d(1, 8, 7), nn.MaxPool2d(2), nn.ReLU(),
            nn.Conv2d(8, 10, 5), nn.MaxPool2d(2), nn.ReLU())
        self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, 6))
        self.cls = nn.Sequential(
            nn.Conv2d(1, 4, 5), nn.MaxPool2d(2), nn.ReLU(),
            nn.Conv2d(4, 8, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(128, 10))
        init_params(self, seed=20)
        # Near-identity theta, as a trained STN starts: small weights, identity bias.
        with torch.no_grad():
            self.fc_loc[2].weight.mul_(0.1)
            self.fc_loc[2].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))

    def forward(self, x):
        theta = self.fc_loc(self.loc(x).flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return self.cls(F.grid_sample(x, grid, align_corners=False))


class AffineGridFn(torch.autograd.Function):
    """The seed article's recipe: native math in forward, a custom node in the ONNX graph."""

    @staticmethod
    def forward(ctx, theta, size):
        return F.affine_grid(theta, size.tolist(), align_corners=False)

    @staticmethod
    def symbolic(g, theta, size):
        return g.op("custom.ops::AffineGrid", theta, size, align_corners_i=0)


class SeedRecipe(SamplerModule):
    def forward(self, x, theta):
        # _shape_as_tensor traces to Shape(x); a Python list would freeze the size.
        return self.sample(x, AffineGridFn.apply(theta, torch._shape_as_tensor(x)))
