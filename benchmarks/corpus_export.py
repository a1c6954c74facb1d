"""Build the real-export corpus that benchmarks/corpus.py measures (issue 39).

    /work/corpus-venv/bin/python benchmarks/corpus_export.py --out /work/corpus [--only NAME ...]
                                                             [--exporters ts20,dynamo18 ...] [--no-post]

Runs in its own environment, not surgeon's: kornia, MONAI and torchvision need their own torch,
and onnxsim / onnxslim / onnxscript / onnxruntime's tools do the post-processing (whatever is
not installed is skipped and listed). Small modules are built around every library function
that samples through an affine grid (and a few that do not, as negatives), each is exported by
TorchScript (opsets 16-20) and dynamo (18, 20, 23), and each export is post-processed as users
do before deploying. Every file goes to OUT/<source>/<name>.onnx, every input set to
OUT/<source>/<case>.inputs.npz, and OUT/manifest.json says per file: the ground truth from how
the module was built ("affine" with its chain count, or "not affine"), source, exporter,
opset, post-processing, dynamic dims and the inputs to feed. Exports that fail are listed
with their one-line reason ("no export": the exporter's limit, not surgeon's).

Which library functions are here, checked against their source (kornia 0.9, torchvision 0.29,
MONAI 1.6): those that reach F.affine_grid or a grid built as base @ theta^T before
F.grid_sample. Left out: kornia's resize / rescale / Resize (F.interpolate), warp_grid /
remap (a dense grid), elastic_transform, thin plate splines (not affine), the 3-D crops
(crop_by_transform_mat3d: warp_perspective3d); MONAI's Zoom
(F.interpolate in its torch backend), Spacing / Orientation (metadata and resampling of
whole volumes, no batch). kornia's warp_perspective is in twice: with an affine homography
built in the model (affine) and with a free homography (not affine: a projective divide); so
is crop_by_transform_mat (a 2x3 goes to warp_affine, a 3x3 to warp_perspective), and
center_crop / crop_and_resize, which solve for a 3x3, are not affine by construction. warp_affine
takes F.affine_grid under tracing (TorchScript) and its own multiply-add grid otherwise (dynamo).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

EXPORTERS = ["ts16", "ts17", "ts18", "ts19", "ts20", "dynamo18", "dynamo20", "dynamo23"]
# Post-processing runs on these exports (every post-processor on every export would be 8x the
# corpus for little: the others differ from these in how the exporter spelled the chain, which
# their plain exports already cover).
POST_ON = ["ts17", "ts20", "dynamo18", "dynamo23"]
# Ops whose presence between theta and the grid makes the grid not affine in theta (rounded to
# integers): a quantiser that reaches the grid path past every theta-shaped value.
QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearMatMul", "QLinearConv",
             "MatMulInteger", "ConvInteger", "QLinearAdd", "QLinearMul", "DynamicQuantizeMatMul", "QGemm",
             "MatMulIntegerToFloat", "QLinearConcat", "QLinearSigmoid"}


@dataclass
class Case:
    source: str
    name: str
    build: Callable[[], nn.Module]
    inputs: dict  # name -> (shape, kind): kind picks how it is drawn (see draw)
    truth: str  # "affine" or "not affine"
    chains: int = 1
    dynamic: dict = field(default_factory=dict)  # name -> {axis: symbol}, the most asked; fallbacks below
    notes: str = ""
    dtype: dict = field(default_factory=dict)  # name -> "float64" where not float32


CASES: list[Case] = []


def case(source, name, inputs, truth="affine", chains=1, dynamic=None, notes="", dtype=None):
    def register(build):
        CASES.append(Case(source, name, build, inputs, truth, chains, dynamic or {}, notes, dtype or {}))
        return build
    return register


NHW = {0: "N", 2: "H", 3: "W"}
NDHW = {0: "N", 2: "D", 3: "H", 4: "W"}
N = {0: "N"}


class Fn(nn.Module):
    """A library call as a module; ``conv``: a 3x3 conv before it, so quantisers have work and the
    warp samples features, as in a network."""

    def __init__(self, fn, conv=0, dims=2):
        super().__init__()
        self.fn = fn
        self.conv = (nn.Conv2d if dims == 2 else nn.Conv3d)(conv, conv, 3, padding=1) if conv else None

    def forward(self, x, *rest):
        if self.conv is not None:
            x = self.conv(x)
        return self.fn(x, *rest)


# ---------------------------------------------------------------- kornia.geometry.transform
def _kg():
    import kornia.geometry.transform as kg
    return kg


X2 = ((2, 3, 20, 24), "image")
X3 = ((2, 2, 6, 7, 8), "image")


@case("kornia.geometry", "warp_affine", {"x": X2, "M": ((2, 2, 3), "pixel_affine")}, dynamic={"x": NHW, "M": N})
def _():
    return Fn(lambda x, m: _kg().warp_affine(x, m, dsize=(x.shape[2], x.shape[3])))


@case("kornia.geometry", "warp_affine_fixed_dsize_conv", {"x": X2, "M": ((2, 2, 3), "pixel_affine")},
      dynamic={"x": NHW, "M": N}, notes="a conv before; output 16x18 whatever the input size")
def _():
    return Fn(lambda x, m: _kg().warp_affine(x, m, dsize=(16, 18)), conv=3)


@case("kornia.geometry", "warp_affine_ac_border", {"x": X2, "M": ((2, 2, 3), "pixel_affine")},
      dynamic={"x": NHW, "M": N})
def _():
    return Fn(lambda x, m: _kg().warp_affine(x, m, dsize=(x.shape[2], x.shape[3]), align_corners=False,
                                             padding_mode="border", mode="nearest"))


@case("kornia.geometry", "rotate", {"x": X2, "angle": ((2,), "degrees")}, dynamic={"x": NHW, "angle": N})
def _():
    return Fn(lambda x, a: _kg().rotate(x, a))


@case("kornia.geometry", "rotate_conv", {"x": X2, "angle": ((2,), "degrees")}, dynamic={"x": NHW, "angle": N})
def _():
    return Fn(lambda x, a: _kg().rotate(x, a, mode="bilinear", padding_mode="reflection"), conv=3)


@case("kornia.geometry", "translate", {"x": X2, "t": ((2, 2), "shift_px")}, dynamic={"x": NHW, "t": N})
def _():
    return Fn(lambda x, t: _kg().translate(x, t))


@case("kornia.geometry", "scale", {"x": X2, "s": ((2, 2), "scale")}, dynamic={"x": NHW, "s": N})
def _():
    return Fn(lambda x, s: _kg().scale(x, s))


@case("kornia.geometry", "shear", {"x": X2, "sh": ((2, 2), "shear")}, dynamic={"x": NHW, "sh": N})
def _():
    return Fn(lambda x, s: _kg().shear(x, s))


@case("kornia.geometry", "affine", {"x": X2, "M": ((2, 2, 3), "pixel_affine")}, dynamic={"x": NHW, "M": N})
def _():
    return Fn(lambda x, m: _kg().affine(x, m))


@case("kornia.geometry", "rotation_matrix2d_warp_affine", {"x": X2, "angle": ((2,), "degrees"),
                                                           "s": ((2, 2), "scale")},
      dynamic={"x": NHW, "angle": N, "s": N}, notes="get_rotation_matrix2d about the centre, then warp_affine")
def _():
    def fn(x, angle, s):
        h, w = x.shape[2], x.shape[3]
        center = torch.stack([(w - 1) / 2 * torch.ones_like(angle), (h - 1) / 2 * torch.ones_like(angle)], -1)
        m = _kg().get_rotation_matrix2d(center, angle, s)
        return _kg().warp_affine(x, m, dsize=(h, w))
    return Fn(fn)


@case("kornia.geometry", "warp_affine3d", {"x": X3, "M": ((2, 3, 4), "pixel_affine3d")},
      dynamic={"x": NDHW, "M": N})
def _():
    return Fn(lambda x, m: _kg().warp_affine3d(x, m, dsize=(x.shape[2], x.shape[3], x.shape[4])))


@case("kornia.geometry", "rotate3d", {"x": X3, "yaw": ((2,), "degrees"), "pitch": ((2,), "degrees"),
                                      "roll": ((2,), "degrees")},
      dynamic={"x": NDHW, "yaw": N, "pitch": N, "roll": N})
def _():
    return Fn(lambda x, y, p, r: _kg().rotate3d(x, y, p, r))


@case("kornia.geometry", "crop_by_transform_mat", {"x": X2, "M": ((2, 2, 3), "pixel_affine")},
      dynamic={"x": NHW, "M": N}, notes="a 2x3 transform: kornia takes warp_affine")
def _():
    from kornia.geometry.transform import crop_by_transform_mat
    return Fn(lambda x, m: crop_by_transform_mat(x, m, (12, 14)))


@case("kornia.geometry", "crop_by_transform_mat_3x3", {"x": X2, "T": ((2, 3, 3), "pixel_homog_affine")},
      truth="not affine", chains=0, dynamic={"x": NHW, "T": N},
      notes="a 3x3 transform: kornia 0.9 takes warp_perspective, a divide by a run-time row")
def _():
    from kornia.geometry.transform import crop_by_transform_mat
    return Fn(lambda x, t: crop_by_transform_mat(x, t, (12, 14)))


@case("kornia.geometry", "center_crop", {"x": X2}, truth="not affine", chains=0, dynamic={"x": NHW},
      notes="boxes from the sizes, get_perspective_transform (a solve), the 3x3 to warp_perspective: "
            "affine only up to the solve's rounding")
def _():
    return Fn(lambda x: _kg().center_crop(x, (12, 14)))


@case("kornia.geometry", "crop_and_resize", {"x": X2, "boxes": ((2, 4, 2), "boxes")}, truth="not affine",
      chains=0, dynamic={"x": NHW, "boxes": N},
      notes="get_perspective_transform (a solve) of run-time boxes, the 3x3 to warp_perspective")
def _():
    return Fn(lambda x, b: _kg().crop_and_resize(x, b, (12, 14)))


@case("kornia.geometry", "warp_perspective_affine_h", {"x": X2, "M": ((2, 2, 3), "pixel_affine")},
      dynamic={"x": NHW, "M": N}, notes="homography [M; 0 0 1] built in the model: its divide is by 1")
def _():
    def fn(x, m):
        row = torch.tensor([0.0, 0.0, 1.0]).expand(m.shape[0], 1, 3)
        return _kg().warp_perspective(x, torch.cat([m, row], 1), dsize=(x.shape[2], x.shape[3]))
    return Fn(fn)


@case("kornia.geometry", "warp_perspective", {"x": X2, "H": ((2, 3, 3), "homography")}, truth="not affine",
      chains=0, dynamic={"x": NHW, "H": N}, notes="a free homography: projective")
def _():
    return Fn(lambda x, h: _kg().warp_perspective(x, h, dsize=(x.shape[2], x.shape[3])))


@case("kornia.geometry", "warp_affine_fill", {"x": X2, "M": ((2, 2, 3), "pixel_affine")},
      dynamic={"x": NHW, "M": N}, notes="padding_mode='fill': a mask of ones warped beside the image, blended with "
                                         "the fill colour")
def _():
    fill = torch.tensor([0.5, 0.2, 0.1])
    return Fn(lambda x, m: _kg().warp_affine(x, m, dsize=(x.shape[2], x.shape[3]), padding_mode="fill",
                                             fill_value=fill))


@case("kornia.geometry", "Affine_module", {"x": X2}, dynamic={"x": {2: "H", 3: "W"}},
      notes="transform.Affine with its parameters as buffers (two items: the batch is theirs)")
def _():
    return _kg().Affine(angle=torch.tensor([20.0, -35.0]), translation=torch.tensor([[2.0, -1.0], [0.5, 3.0]]),
                        scale_factor=torch.tensor([[1.1, 0.9], [1.0, 1.2]]), shear=torch.tensor([[0.1, 0.0], [0.0, -0.2]]))


# ---------------------------------------------------------------- kornia.augmentation
# Random augmentations draw their parameters inside the graph (RandomUniform): corpus.py seeds
# those nodes alike in the original and the fused model before comparing them.
def _ka():
    import kornia.augmentation as ka
    return ka


@case("kornia.augmentation", "RandomAffine", {"x": X2}, dynamic={"x": NHW})
def _():
    return _ka().RandomAffine(degrees=30.0, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=10.0, p=1.0)


@case("kornia.augmentation", "RandomRotation", {"x": X2}, dynamic={"x": NHW})
def _():
    return _ka().RandomRotation(degrees=45.0, p=1.0)


@case("kornia.augmentation", "RandomRotation3D", {"x": X3}, dynamic={"x": NDHW})
def _():
    return _ka().RandomRotation3D(degrees=30.0, p=1.0)


@case("kornia.augmentation", "RandomAffine3D", {"x": X3}, dynamic={"x": NDHW})
def _():
    return _ka().RandomAffine3D(degrees=30.0, scale=(0.9, 1.1), p=1.0)


@case("kornia.augmentation", "CenterCrop_resample", {"x": X2}, dynamic={"x": NHW})
def _():
    return _ka().CenterCrop((12, 14), cropping_mode="resample")


@case("kornia.augmentation", "RandomCrop_resample", {"x": X2}, dynamic={"x": NHW})
def _():
    return _ka().RandomCrop((12, 14), cropping_mode="resample", p=1.0)


@case("kornia.augmentation", "RandomPerspective", {"x": X2}, truth="not affine", chains=0, dynamic={"x": NHW})
def _():
    return _ka().RandomPerspective(0.5, p=1.0)


@case("kornia.augmentation", "AugmentationSequential_two_affine", {"x": X2}, chains=2, dynamic={"x": NHW},
      notes="RandomAffine then RandomRotation: two warps")
def _():
    ka = _ka()
    return ka.AugmentationSequential(ka.RandomAffine(degrees=20.0, translate=(0.1, 0.1), p=1.0),
                                     ka.RandomRotation(degrees=30.0, p=1.0))


@case("kornia.augmentation", "RandomRotation_conv", {"x": X2}, dynamic={"x": NHW},
      notes="a conv before the augmentation, something to quantise")
def _():
    aug = _ka().RandomRotation(degrees=45.0, p=1.0)
    return Fn(lambda x: aug(x), conv=3)


@case("kornia.augmentation", "RandomResizedCrop_resample", {"x": X2}, dynamic={"x": NHW},
      notes="cropping_mode='resample': crop boxes drawn in the graph, a warp to 16x18")
def _():
    return _ka().RandomResizedCrop((16, 18), cropping_mode="resample", p=1.0)


@case("kornia.augmentation", "RandomShear", {"x": X2}, dynamic={"x": NHW})
def _():
    return _ka().RandomShear(shear=(-10.0, 10.0, -5.0, 5.0), p=1.0)


@case("kornia.augmentation", "RandomTranslate_reflection", {"x": X2}, dynamic={"x": NHW})
def _():
    return _ka().RandomTranslate(translate_x=(-0.1, 0.1), translate_y=(-0.2, 0.2), padding_mode="reflection",
                                 p=1.0)


# ---------------------------------------------------------------- torchvision
def _torchvision():
    """Import torchvision. Its wheel's compiled ops (nms, roi_align...) are built against one torch
    build; against another (PyPI's CUDA torchvision beside a CPU torch) they do not load, and the
    import stops where it registers their meta kernels. The corpus uses only its Python
    transforms, so that registration is skipped there."""
    try:
        import torchvision
    except RuntimeError as exc:
        if "does not exist" not in str(exc):
            raise
        import types
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
        import torchvision
    return torchvision


def _tv():
    _torchvision()
    import torchvision.transforms.v2.functional as tvf
    return tvf


@case("torchvision", "v2_affine", {"x": X2}, dynamic={"x": NHW},
      notes="angle, shift, scale, shear are Python numbers: the grid has no run-time theta")
def _():
    return Fn(lambda x: _tv().affine(x, angle=30.0, translate=[2.0, -3.0], scale=1.1, shear=[5.0, 0.0]))


@case("torchvision", "v2_affine_nearest_conv", {"x": X2}, dynamic={"x": NHW})
def _():
    _torchvision()
    from torchvision.transforms import InterpolationMode
    return Fn(lambda x: _tv().affine(x, angle=-20.0, translate=[1.0, 1.0], scale=0.9, shear=[0.0, 8.0],
                                     interpolation=InterpolationMode.NEAREST), conv=3)


@case("torchvision", "v2_rotate", {"x": X2}, dynamic={"x": NHW})
def _():
    return Fn(lambda x: _tv().rotate(x, 30.0))


@case("torchvision", "v2_rotate_expand", {"x": X2}, dynamic={"x": NHW},
      notes="expand=True: the output size computed from the rotated corners")
def _():
    return Fn(lambda x: _tv().rotate(x, 30.0, expand=True))


@case("torchvision", "v1_affine", {"x": X2}, dynamic={"x": NHW})
def _():
    _torchvision()
    import torchvision.transforms.functional as f1
    return Fn(lambda x: f1.affine(x, angle=15.0, translate=[3, 0], scale=1.2, shear=[0.0, 0.0]))


@case("torchvision", "v2_RandomAffine", {"x": X2}, dynamic={"x": NHW},
      notes="parameters drawn in Python at trace time: constants in the export")
def _():
    _torchvision()
    from torchvision.transforms import v2
    torch.manual_seed(3)
    return v2.RandomAffine(degrees=25.0, translate=(0.1, 0.1), scale=(0.9, 1.1))


@case("torchvision", "v2_affine_center", {"x": X2}, dynamic={"x": NHW}, notes="a rotation about a given centre")
def _():
    return Fn(lambda x: _tv().affine(x, angle=-40.0, translate=[0.0, 2.0], scale=0.8, shear=[0.0, 0.0],
                                     center=[5.0, 7.0]))


@case("torchvision", "v2_RandomRotation", {"x": X2}, dynamic={"x": NHW})
def _():
    _torchvision()
    from torchvision.transforms import v2
    torch.manual_seed(5)
    return v2.RandomRotation(degrees=40.0)


@case("torchvision", "v2_perspective_affine_points", {"x": X2}, dynamic={"x": NHW},
      notes="perspective() between point sets one affine map apart: the coefficients' last row is 0, the "
            "divide is by a constant 1")
def _():
    start = [[0, 0], [23, 0], [23, 19], [0, 19]]
    end = [[2, 1], [25, 3], [23, 22], [0, 20]]  # end = A start + t for one A, t: an affine map
    return Fn(lambda x: _tv().perspective(x, start, end))


@case("torchvision", "v2_perspective", {"x": X2}, truth="not affine", chains=0, dynamic={"x": NHW},
      notes="a projective map: the divide is by a value that varies over the image")
def _():
    return Fn(lambda x: _tv().perspective(x, [[0, 0], [23, 0], [23, 19], [0, 19]], [[1, 2], [22, 1], [25, 20], [3, 21]]))


# ---------------------------------------------------------------- MONAI
@case("monai", "AffineTransform_2d", {"x": X2, "theta": ((2, 2, 3), "pixel_affine")},
      dynamic={"x": NHW, "theta": N}, notes="networks.layers.AffineTransform, a pixel-space theta (normalized=False)")
def _():
    from monai.networks.layers import AffineTransform
    return AffineTransform(normalized=False, mode="bilinear", padding_mode="zeros")


@case("monai", "AffineTransform_2d_normalized_conv", {"x": X2, "theta": ((2, 2, 3), "theta")},
      dynamic={"x": NHW, "theta": N})
def _():
    from monai.networks.layers import AffineTransform
    layer = AffineTransform(normalized=True, spatial_size=(16, 18), padding_mode="border")
    return Fn(lambda x, t: layer(x, t), conv=3)


@case("monai", "AffineTransform_3d", {"x": X3, "theta": ((2, 3, 4), "pixel_affine3d")},
      dynamic={"x": NDHW, "theta": N})
def _():
    from monai.networks.layers import AffineTransform
    return AffineTransform(normalized=False, mode="bilinear", padding_mode="zeros")


@case("monai", "AffineTransform_3d_normalized", {"x": X3, "theta": ((2, 3, 4), "theta")},
      dynamic={"x": NDHW, "theta": N}, notes="normalized=True: the pixel-space form (normalized=False) calls "
                                             "torch.diag, which neither exporter takes")
def _():
    from monai.networks.layers import AffineTransform
    return AffineTransform(normalized=True, mode="bilinear", padding_mode="zeros", align_corners=True)


X_CHW = ((3, 20, 24), "image")
CHW = {1: "H", 2: "W"}


@case("monai", "transforms_Affine", {"x": X_CHW}, dynamic={"x": CHW},
      notes="transforms.Affine on a channel-first image, torch backend; fixed parameters")
def _():
    from monai.transforms import Affine
    aff = Affine(rotate_params=0.3, scale_params=(1.1, 0.9), translate_params=(2.0, 1.0), padding_mode="zeros",
                 image_only=True)
    return Fn(lambda x: torch.as_tensor(aff(x)))


@case("monai", "transforms_Rotate", {"x": X_CHW}, dynamic={"x": CHW})
def _():
    from monai.transforms import Rotate
    rot = Rotate(angle=0.4, keep_size=True)
    return Fn(lambda x: torch.as_tensor(rot(x)))


@case("monai", "transforms_Resample_double_grid", {"x": X_CHW}, dynamic={"x": CHW},
      notes="a fixed rotation's grid computed in double, Resample samples the float image")
def _():
    from monai.transforms import AffineGrid, Resample
    ag = AffineGrid(rotate_params=0.5, dtype=torch.float64)

    def fn(x):
        grid, _ = ag(spatial_size=x.shape[1:])
        return torch.as_tensor(Resample()(x, grid=grid))
    return Fn(fn)


@case("monai", "transforms_RandAffine", {"x": X_CHW}, dynamic={"x": CHW},
      notes="RandAffine, parameters drawn in Python (seeded): constants in the export")
def _():
    from monai.transforms import RandAffine
    aff = RandAffine(prob=1.0, rotate_range=0.5, shear_range=(0.1, 0.1), translate_range=(2, 2),
                     scale_range=(0.1, 0.1), padding_mode="border")
    aff.set_random_state(7)
    aff.randomize()
    return Fn(lambda x: torch.as_tensor(aff(x, randomize=False)))


# ---------------------------------------------------------------- plain torch
class Stn(nn.Module):
    """A localisation net gives theta; the features are warped by it."""

    def __init__(self, dims=2, ac=False, mode="bilinear", pad="zeros", head="linear", double=None):
        super().__init__()
        conv = nn.Conv2d if dims == 2 else nn.Conv3d
        self.dims, self.ac, self.mode, self.pad, self.double = dims, ac, mode, pad, double
        self.features = nn.Sequential(conv(3 if dims == 2 else 2, 4, 3, padding=1), nn.ReLU())
        k = 6 if dims == 2 else 12
        if head == "transformer":  # what onnxruntime's transformers optimiser fuses
            self.head = nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 16))
            self.norm = nn.LayerNorm(16)
            self.out = nn.Linear(16, k)
        else:
            self.head, self.norm, self.out = None, None, nn.Linear(4, k)
        with torch.no_grad():
            self.out.weight.mul_(0.1)
            self.out.bias.copy_(torch.eye(dims, dims + 1).flatten())

    def forward(self, x):
        f = self.features(x)
        z = f.mean(dim=tuple(range(2, f.dim())))
        if self.head is not None:
            h = self.head[0](z)
            z = self.norm(h + self.head[2](self.head[1](h)))  # residual + LayerNorm: SkipLayerNormalization
        theta = self.out(z).view(-1, self.dims, self.dims + 1)
        size = list(f.shape)
        if self.double == "all":
            grid = F.affine_grid(theta.double(), size, align_corners=self.ac)
            return F.grid_sample(f.double(), grid, self.mode, self.pad, self.ac).float()
        if self.double == "grid":  # float theta -> double grid -> float grid
            grid = F.affine_grid(theta.double(), size, align_corners=self.ac).float()
            return F.grid_sample(f, grid, self.mode, self.pad, self.ac)
        grid = F.affine_grid(theta, size, align_corners=self.ac)
        return F.grid_sample(f, grid, self.mode, self.pad, self.ac)


class Warp(nn.Module):
    """x and theta in; ``homog``: theta is [N,3,3] and its first rows are used."""

    def __init__(self, ac=False, mode="bilinear", pad="zeros", homog=False, out=None, dtype=None):
        super().__init__()
        self.ac, self.mode, self.pad, self.homog, self.out, self.dtype = ac, mode, pad, homog, out, dtype

    def forward(self, x, theta):
        if self.homog:
            theta = theta[:, : theta.shape[1] - 1]
        if self.dtype is not None:
            theta, x = theta.to(self.dtype), x.to(self.dtype)
        size = list(x.shape) if self.out is None else [x.shape[0], x.shape[1], *self.out]
        return F.grid_sample(x, F.affine_grid(theta, size, align_corners=self.ac), self.mode, self.pad, self.ac)


@case("torch", "stn2d", {"x": X2}, dynamic={"x": NHW})
def _():
    return Stn()


@case("torch", "stn2d_ac_bicubic_reflection", {"x": X2}, dynamic={"x": NHW})
def _():
    return Stn(ac=True, mode="bicubic", pad="reflection")


@case("torch", "stn2d_transformer_head", {"x": X2}, dynamic={"x": NHW},
      notes="theta from Linear-GELU-Linear, residual, LayerNorm: the transformers optimiser's fusions")
def _():
    return Stn(head="transformer")


@case("torch", "stn3d", {"x": X3}, dynamic={"x": NDHW})
def _():
    return Stn(dims=3)


@case("torch", "stn2d_theta_double", {"x": X2}, dynamic={"x": NHW}, notes="theta and image cast to double")
def _():
    return Stn(double="all")


@case("torch", "stn2d_double_grid_cast_float", {"x": X2}, dynamic={"x": NHW},
      notes="float theta -> Cast(double) -> grid in double -> Cast(float)")
def _():
    return Stn(double="grid")


@case("torch", "warp2d", {"x": X2, "theta": ((2, 2, 3), "theta")}, dynamic={"x": NHW, "theta": N})
def _():
    return Warp()


@case("torch", "warp2d_homog_out", {"x": X2, "theta": ((2, 3, 3), "theta_homog")}, dynamic={"x": NHW, "theta": N},
      notes="homogeneous theta, fixed output 10x9, nearest border align_corners")
def _():
    return Warp(ac=True, mode="nearest", pad="border", homog=True, out=(10, 9))


@case("torch", "warp3d", {"x": X3, "theta": ((2, 3, 4), "theta")}, dynamic={"x": NDHW, "theta": N})
def _():
    return Warp()


@case("torch", "warp3d_double", {"x": (X3[0], "image"), "theta": ((2, 3, 4), "theta")},
      dynamic={"x": NDHW, "theta": N}, dtype={"x": "float64", "theta": "float64"},
      notes="a 3-D warp entirely in double")
def _():
    return Warp()


@case("torch", "warp2d_theta_to_double", {"x": X2, "theta": ((2, 2, 3), "theta")}, dynamic={"x": NHW, "theta": N},
      notes="theta and image cast to double before affine_grid")
def _():
    return Warp(dtype=torch.float64)


class FlowWarpNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.flow = nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, x):
        return F.grid_sample(x, torch.tanh(self.flow(x)).permute(0, 2, 3, 1), align_corners=False)


@case("torch", "neg_flow_warp", {"x": X2}, truth="not affine", chains=0, dynamic={"x": NHW})
def _():
    return FlowWarpNet()


class TanhGrid(nn.Module):
    def forward(self, x, theta):
        return F.grid_sample(x, torch.tanh(F.affine_grid(theta, list(x.shape), align_corners=False)),
                             align_corners=False)


@case("torch", "neg_tanh_of_grid", {"x": X2, "theta": ((2, 2, 3), "theta")}, truth="not affine", chains=0,
      dynamic={"x": NHW, "theta": N})
def _():
    return TanhGrid()


class ClampTheta(nn.Module):
    def forward(self, x, theta):
        return F.grid_sample(x, F.affine_grid(theta, list(x.shape), align_corners=False).clamp(-0.9, 0.9),
                             align_corners=False)


@case("torch", "neg_clamped_grid", {"x": X2, "theta": ((2, 2, 3), "theta")}, truth="not affine", chains=0,
      dynamic={"x": NHW, "theta": N})
def _():
    return ClampTheta()


# ---------------------------------------------------------------- inputs
def draw(name: str, shape, kind: str, rng: np.random.Generator, dtype: str = "float32") -> np.ndarray:
    """Inputs that make each function do its real work: rotations over the whole circle, shifts of a
    few pixels, scales away from 1, boxes inside the image."""
    n = shape[0] if shape else 1
    if kind == "image":
        out = rng.random(shape)
    elif kind == "degrees":
        out = rng.uniform(-170, 170, shape)
    elif kind == "shift_px":
        out = rng.uniform(-4, 4, shape)
    elif kind == "scale":
        out = rng.uniform(0.6, 1.5, shape)
    elif kind == "shear":
        out = rng.uniform(-0.4, 0.4, shape)
    elif kind in ("pixel_affine", "pixel_homog_affine", "pixel_homog_affine1"):
        single = kind == "pixel_homog_affine1"
        count = 1 if single else n
        a = rng.uniform(-np.pi, np.pi, count)
        s = rng.uniform(0.7, 1.3, count)
        m = np.zeros((count, 3, 3))
        m[:, 0, 0], m[:, 0, 1], m[:, 1, 0], m[:, 1, 1] = s * np.cos(a), -s * np.sin(a), s * np.sin(a), s * np.cos(a)
        m[:, :2, 2] = rng.uniform(-3, 3, (count, 2)) + [10, 8]
        m[:, 2, 2] = 1
        out = m[0] if single else (m if kind == "pixel_homog_affine" else m[:, :2])
    elif kind == "pixel_affine3d":
        out = np.concatenate([np.eye(3) + 0.2 * rng.standard_normal((n, 3, 3)), rng.uniform(-1, 1, (n, 3, 1))], 2)
    elif kind == "homography":
        out = np.eye(3) + 0.1 * rng.standard_normal((n, 3, 3))
        out[:, 2, :2] *= 0.05  # a mild projective part
    elif kind == "theta":
        rows = shape[1]
        out = np.eye(rows, rows + 1) + 0.25 * rng.standard_normal(shape)
    elif kind == "theta_homog":
        out = np.eye(3) + 0.25 * rng.standard_normal(shape)
        out[:, 2] = [0, 0, 1]
    elif kind == "boxes":  # clockwise corners, inside a 20x24 image
        x0, y0 = rng.uniform(1, 6, n), rng.uniform(1, 5, n)
        w, h = rng.uniform(8, 14, n), rng.uniform(7, 12, n)
        out = np.stack([np.stack([x0, y0], -1), np.stack([x0 + w, y0], -1), np.stack([x0 + w, y0 + h], -1),
                        np.stack([x0, y0 + h], -1)], 1)
    else:
        raise ValueError(kind)
    return np.asarray(out, dtype=dtype)


def case_inputs(c: Case, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: draw(k, shape, kind, rng, c.dtype.get(k, "float32")) for k, (shape, kind) in c.inputs.items()}


# ---------------------------------------------------------------- exporting
@contextlib.contextmanager
def quiet():
    """Exporters write pages of warnings, some from C++ straight to fd 1/2."""
    sys.stdout.flush(), sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1), os.dup2(null, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def _dynamic_levels(c: Case) -> list[tuple[str, dict]]:
    """What to ask for, most dynamic first: every axis the case names, the batch only, nothing."""
    levels = [("all", c.dynamic)] if c.dynamic else []
    batch = {k: {a: s for a, s in v.items() if s == "N"} for k, v in c.dynamic.items()}
    batch = {k: v for k, v in batch.items() if v}
    if batch and batch != c.dynamic:
        levels.append(("batch", batch))
    levels.append(("static", {}))
    return levels


def export_one(c: Case, exporter: str, path: Path, feeds: dict) -> tuple[str, str]:
    """Export at the most dynamic level the exporter takes; returns (level, notes of levels that
    failed). Raises with the last failure when none exports."""
    opset = int(exporter.lstrip("tsdynamo"))
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    names = list(feeds)
    failures = []
    for level, dyn in _dynamic_levels(c):
        torch.manual_seed(0)
        module = c.build().eval()
        try:
            with quiet():
                if exporter.startswith("ts"):
                    axes = {k: dict(v) for k, v in dyn.items()}
                    out_axes = dict(dyn.get("x", {}))
                    if out_axes:
                        axes["y"] = out_axes
                    torch.onnx.export(module, args, str(path), dynamo=False, opset_version=opset, input_names=names,
                                      output_names=["y"], dynamic_axes=axes or None)
                else:
                    dims: dict[str, torch.export.Dim] = {}
                    shapes = None
                    if dyn:
                        specs = [({a: dims.setdefault(s, torch.export.Dim(s, min=2, max=1024))
                                   for a, s in dyn[k].items()} if k in dyn else None) for k in names]
                        shapes = _by_signature(module, specs)
                    torch.onnx.export(module, args, str(path), dynamo=True, opset_version=opset, input_names=names,
                                      output_names=["y"], dynamic_shapes=shapes, external_data=False,
                                      verbose=False, optimize=True)
            check_runs(path, feeds)
            return level, "; ".join(failures)
        except Exception as exc:  # the next level, or "no export"
            failures.append(f"{level}: {one_line(exc)}")
            if path.exists():
                path.unlink()
    raise RuntimeError(failures[-1] if failures else "no level")


def _by_signature(module: nn.Module, specs: list) -> tuple:
    """dynamic_shapes in the structure of forward's parameters: a ``*rest`` takes the rest as a tuple."""
    import inspect
    out, i = [], 0
    for p in inspect.signature(module.forward).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            out.append(tuple(specs[i:]))
            i = len(specs)
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and i < len(specs):
            out.append(specs[i])
            i += 1
    return tuple(out)


def one_line(exc: BaseException) -> str:
    """The root cause's first line: the exporters wrap the error that says why in their own."""
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    text = [t for t in f"{type(exc).__name__}: {exc}".strip().splitlines() if t.strip()]
    return (text[0] if text else type(exc).__name__)[:300]


def check_runs(path: Path, feeds: dict):
    """An export that onnxruntime cannot run is no input for the measurement: say so here."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    if names != set(feeds):
        raise RuntimeError(f"the export's inputs are {sorted(names)}, not {sorted(feeds)}")
    return sess.run(None, feeds)


# ---------------------------------------------------------------- post-processing
def _load(path):
    import onnx
    return onnx.load(str(path))


def _save(model, path):
    import onnx
    onnx.save(model, str(path))


def post_onnxsim(src, dst, feeds):
    import onnxsim
    model, ok = onnxsim.simplify(_load(src))
    if not ok:
        raise RuntimeError("onnxsim could not check its result")
    _save(model, dst)


def post_onnxslim(src, dst, feeds):
    import onnxslim
    _save(onnxslim.slim(_load(src)), dst)


def post_onnxscript(src, dst, feeds):
    import onnxscript.optimizer
    _save(onnxscript.optimizer.optimize(_load(src)), dst)


def _ort_level(level):
    def run(src, dst, feeds):
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        opts.optimized_model_filepath = str(dst)
        ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])
    return run


def post_ort_transformers(src, dst, feeds):
    from onnxruntime.transformers.optimizer import optimize_model
    # bert's fusions (SkipLayerNormalization, BiasGelu, FastGelu...) with onnxruntime's own pass first
    opt = optimize_model(str(src), model_type="bert", num_heads=0, hidden_size=0, opt_level=1, use_gpu=False)
    opt.save_model_to_file(str(dst))


def _has_op(path, ops):
    return any(n.op_type in ops for n in _load(path).graph.node)


def post_quant_dynamic(src, dst, feeds):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    if not _has_op(src, {"Conv", "MatMul", "Gemm"}):
        raise Skip("nothing to quantise")
    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QUInt8)


class Reader:
    """Calibration data: the case's inputs and two more draws."""

    def __init__(self, batches):
        self.batches = iter(batches)

    def get_next(self):
        return next(self.batches, None)


def _quant_static(fmt):
    def run(src, dst, feeds, more=()):
        from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
        if not _has_op(src, {"Conv", "MatMul", "Gemm"}):
            raise Skip("nothing to quantise")
        quantize_static(str(src), str(dst), Reader([feeds, *more]), quant_format=getattr(QuantFormat, fmt),
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return run


def post_quant_pre_qop(src, dst, feeds, more=()):
    """quant_pre_process first (symbolic shape inference, onnxruntime's optimiser), as
    onnxruntime's quantisation guide says, then static QOperator quantisation."""
    from onnxruntime.quantization.shape_inference import quant_pre_process
    if not _has_op(src, {"Conv", "MatMul", "Gemm"}):
        raise Skip("nothing to quantise")
    pre = Path(str(dst) + ".pre.onnx")
    try:
        try:
            quant_pre_process(str(src), str(pre))
        except Exception:  # symbolic shape inference gives up on some exports: what users then skip
            quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        _quant_static("QOperator")(pre, dst, feeds, more)
    finally:
        if pre.exists():
            pre.unlink()


def post_fp16_occ(src, dst, feeds):
    from onnxconverter_common import float16
    _save(float16.convert_float_to_float16(_load(src), keep_io_types=True), dst)


def post_fp16_ort(src, dst, feeds):
    from onnxruntime.transformers.float16 import convert_float_to_float16
    _save(convert_float_to_float16(_load(src), keep_io_types=True), dst)


class Skip(Exception):
    """This post-processing has nothing to do on this model."""


POST = {
    "onnxsim": post_onnxsim,
    "onnxslim": post_onnxslim,
    "onnxscript-opt": post_onnxscript,
    "ort-basic": _ort_level("ORT_ENABLE_BASIC"),
    "ort-extended": _ort_level("ORT_ENABLE_EXTENDED"),
    "ort-all": _ort_level("ORT_ENABLE_ALL"),
    "ort-transformers": post_ort_transformers,
    "quant-dynamic": post_quant_dynamic,
    "quant-static-qop": _quant_static("QOperator"),
    "quant-static-qdq": _quant_static("QDQ"),
    "quant-pre+static-qop": post_quant_pre_qop,
    "fp16-occ": post_fp16_occ,
    "fp16-ort": post_fp16_ort,
}
# Each post-processor after another where users chain them (a simplifier, then an optimiser or
# a converter): one pass of each, on the onnxsim output.
CHAINED = {"onnxsim+ort-extended": ("onnxsim", "ort-extended"), "onnxslim+fp16-occ": ("onnxslim", "fp16-occ"),
           "onnxsim+quant-static-qop": ("onnxsim", "quant-static-qop")}


def structure_key(path) -> str:
    """Node ops and wiring, names left out: two post-processors that write the same graph give one file."""
    model = _load(path)
    h = hashlib.blake2b(digest_size=12)
    for node in model.graph.node:
        h.update(f"{node.domain}::{node.op_type}/{len(node.input)}/{len(node.output)};".encode())
        for a in node.attribute:
            h.update(a.SerializeToString())
    for t in model.graph.initializer:
        h.update(t.SerializeToString())
    return h.hexdigest()


def theta_like(shape) -> bool:
    """A value the matcher may take for theta: [N,2,3], [N,3,4], [N,3,3], [N,4,4] or flat."""
    if len(shape) == 3 and tuple(shape[1:]) in ((2, 3), (3, 4), (3, 3), (4, 4)):
        return True
    return len(shape) in (1, 2) and shape[-1] in (6, 12, 9, 16)


def quantised_grid_path(path, feeds) -> bool:
    """True when a quantising op lies between the last theta-shaped values and a sampler's grid:
    the grid is then rounded, not affine in any theta (found on a real run's shapes)."""
    import onnx
    import onnxruntime as ort
    model = _load(path)
    producers = {o: n for n in model.graph.node for o in n.output}
    consts = {i.name for i in model.graph.initializer}
    inputs = {i.name for i in model.graph.input}
    samplers = [n for n in model.graph.node if "grid" in n.op_type.lower()
                or any(a.name == "operator" and b"grid_sampler" in a.s for a in n.attribute)]
    if not samplers or not any(n.op_type in QUANT_OPS for n in model.graph.node):
        return False
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    for n in probe.graph.node:
        for o in n.output:
            if o and o not in known:
                probe.graph.output.add().name = o
                known.add(o)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(probe.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    values = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    for s in samplers:
        stack, seen = [s.input[1]], set()
        while stack:
            v = stack.pop()
            if v in seen or v in consts or v in inputs or not v:
                continue
            seen.add(v)
            if v in values and theta_like(np.shape(values[v])):
                continue
            node = producers.get(v)
            if node is None:
                continue
            if node.op_type in QUANT_OPS:
                return True
            if node.op_type not in ("Shape", "Size"):  # a size reads no values
                stack.extend(node.input)
    return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/work/corpus")
    ap.add_argument("--only", nargs="*", help="case names")
    ap.add_argument("--exporters", default=",".join(EXPORTERS))
    ap.add_argument("--post-on", default=",".join(POST_ON), help="exports that get post-processed")
    ap.add_argument("--no-post", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="keep the exports the manifest lists; post-process again")
    ap.add_argument("--post", default=",".join(list(POST) + list(CHAINED)), help="post-processings to apply")
    ap.add_argument("--smoke", action="store_true",
                    help="two plain-torch cases, TorchScript opset 20, onnxruntime's optimiser and dynamic "
                         "quantisation only, into a temporary folder (no kornia, MONAI, torchvision, dynamo)")
    args = ap.parse_args(argv)
    if args.smoke:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="corpus-export-") as tmp:
            print("SMOKE: two plain-torch cases, ts20, three post-processings")
            return run(tmp, ["stn2d", "neg_tanh_of_grid"], ["ts20"], {"ts20"}, ["ort-basic", "ort-extended",
                                                                              "quant-dynamic"], check=True)
    exporters = args.exporters.split(",")
    return run(args.out, args.only, exporters, set() if args.no_post else set(args.post_on.split(",")) & set(exporters),
               args.post.split(","), reuse=args.reuse)


def run(out, only, exporters, post_on, posts, check=False, reuse=False):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"files": {}, "failed": {}}
    versions = {}
    for mod in ("torch", "torchvision", "kornia", "monai", "onnx", "onnxruntime", "onnxscript", "onnxsim", "onnxslim",
                "onnxconverter_common"):
        try:
            versions[mod] = (_torchvision() if mod == "torchvision" else __import__(mod)).__version__
        except Exception as exc:  # recorded: its cases or post-processing are skipped
            versions[mod] = f"missing ({one_line(exc)})"
    manifest["versions"] = versions
    known = {c.name for c in CASES}
    for part in ("files", "failed"):  # cases since removed from this script
        manifest[part] = {k: v for k, v in manifest[part].items() if v.get("case") in known}
    start = time.time()
    counts = Counter()
    for c in CASES:
        if only and c.name not in only:
            continue
        folder = out / c.source
        folder.mkdir(exist_ok=True)
        feeds = case_inputs(c)
        more = [case_inputs(c, seed) for seed in (1, 2)]
        npz = folder / f"{c.name}.inputs.npz"
        np.savez(npz, **feeds)
        for exporter in exporters:
            base = f"{c.name}__{exporter}"
            path = folder / f"{base}.onnx"
            rel = str(path.relative_to(out))
            entry = {"source": c.source, "case": c.name, "truth": c.truth, "chains": c.chains, "exporter": exporter,
                     "post": "none", "inputs": str(npz.relative_to(out)), "notes": c.notes}
            t0 = time.time()
            if reuse and rel in manifest["failed"]:
                continue
            reused = reuse and rel in manifest["files"] and path.exists()
            try:
                if reused:
                    level, fell = manifest["files"][rel]["dynamic"], manifest["files"][rel]["fallbacks"]
                else:
                    level, fell = export_one(c, exporter, path, feeds)
            except Exception as exc:
                manifest["failed"][rel] = {**entry, "stage": "no export", "reason": str(exc)}
                manifest["files"].pop(rel, None)
                counts["no export"] += 1
                print(f"{rel:70s} no export: {str(exc)[:150]}", flush=True)
                continue
            manifest["failed"].pop(rel, None)
            entry.update(dynamic=level, fallbacks=fell)
            manifest["files"][rel] = entry
            counts["reused" if reused else "exported"] += 1
            print(f"{rel:70s} {'reused' if reused else 'exported'} ({level}) {time.time() - t0:.1f}s", flush=True)
            if exporter not in post_on:
                continue
            seen = {structure_key(path): rel}
            made = {"none": path}
            for post, fn in [(p, f) for p, f in list(POST.items()) + list(CHAINED.items()) if p in posts]:
                src = path
                if isinstance(fn, tuple):
                    earlier = folder / f"{base}__{fn[0]}.onnx"
                    if fn[0] not in made and earlier.exists():  # written by an earlier run (--reuse)
                        made[fn[0]] = earlier
                    if fn[0] not in made:
                        continue
                    src, fn = made[fn[0]], POST[fn[1]]
                dst = folder / f"{base}__{post}.onnx"
                prel = str(dst.relative_to(out))
                pentry = {**entry, "post": post}
                try:
                    with quiet():
                        if "static" in post:
                            fn(src, dst, feeds, more)
                        else:
                            fn(src, dst, feeds)
                    check_runs(dst, feeds)
                    key = structure_key(dst)
                    if key in seen:  # the same graph as another file: nothing new to measure
                        dst.unlink()
                        made[post] = folder / Path(seen[key]).name
                        counts["post: same graph"] += 1
                        continue
                    seen[key] = prel
                    made[post] = dst
                    if c.truth == "affine" and quantised_grid_path(dst, feeds):
                        pentry["truth"] = "not affine"
                        pentry["notes"] = (c.notes + "; " if c.notes else "") + \
                            "quantisation rounds the grid itself (a quantising op past every theta-shaped value)"
                    manifest["files"][prel] = pentry
                    manifest["failed"].pop(prel, None)
                    counts["post-processed"] += 1
                    print(f"{prel:70s} post-processed", flush=True)
                except Skip:
                    counts["post: skipped"] += 1
                    manifest["files"].pop(prel, None)
                except Exception as exc:
                    if dst.exists():
                        dst.unlink()
                    manifest["files"].pop(prel, None)
                    manifest["failed"][prel] = {**pentry, "stage": "post-processing failed", "reason": one_line(exc)}
                    counts["post: failed"] += 1
                    print(f"  {post}: failed: {one_line(exc)[:150]}", flush=True)
            manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"done in {time.time() - start:.0f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if check:  # the smoke's own check: the manifest names every file written, with its ground truth
        files = json.loads(manifest_path.read_text())["files"]
        assert files and all((out / rel).is_file() and e["truth"] in ("affine", "not affine")
                             for rel, e in files.items()), files
        print(f"manifest: {len(files)} files, " + ", ".join(f"{t} {n}" for t, n in sorted(
            Counter(e["truth"] for e in files.values()).items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
