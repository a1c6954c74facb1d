"""Small real models exported by torch at opsets 18-20, as users' models reach surgeon: a spatial
transformer whose affine chain fuses, beside what exporters write that onnx.version_converter
cannot step down (Pad from F.pad, Split from torch.chunk, ConstantOfShape from zeros of a dynamic
shape, a standard GridSample of a flow field left as it is, 4-D and 5-D)."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import nn


class ImageStn(nn.Module):
    """Features, a localisation head giving theta, the affine warp, then a flow warp."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Linear(8, 6)
        self.flow = nn.Conv2d(8, 2, 3, padding=1)
        self.eval()

    def forward(self, x):
        f = self.features(F.pad(x, (1, 2, 0, 1), mode="reflect"))
        theta = self.head(f.mean(dim=(2, 3))).view(-1, 2, 3) * 0.1 + torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
        warped = F.grid_sample(f, F.affine_grid(theta, list(f.shape), align_corners=False), align_corners=False)
        flow = torch.tanh(self.flow(warped)).permute(0, 2, 3, 1)
        moved = F.grid_sample(warped, flow, mode="bilinear", padding_mode="border", align_corners=True)
        a, b = torch.chunk(moved, 2, dim=1)
        bias = torch.zeros(a.shape[0], 1, a.shape[2], a.shape[3], dtype=a.dtype)
        return a * b + bias


class VolumeStn(nn.Module):
    """A 3-D affine warp, then a 5-D flow warp (a volume GridSample: 4-D only before opset 20)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv3d(2, 4, 3, padding=1)
        self.flow = nn.Conv3d(4, 3, 1)
        self.eval()

    def forward(self, x, theta):
        v = F.pad(self.conv(x), (1, 1, 0, 0, 0, 0))
        warped = F.grid_sample(v, F.affine_grid(theta, list(v.shape), align_corners=True), align_corners=True)
        flow = torch.tanh(self.flow(warped)).permute(0, 2, 3, 4, 1)
        return F.grid_sample(warped, flow, mode="nearest", padding_mode="reflection", align_corners=False)


MODELS = {"stn": (ImageStn, {"x": (2, 3, 20, 18)}), "volume": (VolumeStn, {"x": (2, 2, 6, 5, 4), "theta": (2, 3, 4)})}


def inputs(name: str, seed: int = 0, batch: int | None = None) -> dict:
    gen = torch.Generator().manual_seed(seed)
    found = {k: torch.rand((batch or shape[0], *shape[1:]), generator=gen) * 2 - 1
             for k, shape in MODELS[name][1].items()}
    if "theta" in found:
        found["theta"] = torch.eye(3, 4).expand(found["theta"].shape[0], 3, 4) + 0.2 * found["theta"]
    return found


def export(name: str, path: str, opset: int, dynamo: bool, half: bool = False) -> None:
    """``half``: the module and its inputs in float16 (as a float16 deployment exports them)."""
    cls, shapes = MODELS[name]
    module = cls().half() if half else cls()
    args = tuple(v.half() if half else v for v in inputs(name).values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            batch = torch.export.Dim("batch", min=1, max=64)
            dims = {k: {0: batch} for k in shapes}
            torch.onnx.export(module, args, path, dynamo=True, opset_version=opset, input_names=list(shapes),
                              dynamic_shapes=dims, verbose=False, external_data=False)
        else:
            torch.onnx.export(module, args, path, dynamo=False, opset_version=opset, input_names=list(shapes),
                              dynamic_axes={k: {0: "batch"} for k in shapes})
