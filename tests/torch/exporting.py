"""Models for the export tests: the same warp written with surgeon.torch and with torch's
F.affine_grid + F.grid_sample, and a plain torch.onnx.export of either."""

from __future__ import annotations

import os
import warnings

import onnx
import torch
import torch.nn.functional as F

import surgeon_ops.torch as st


class WarpToExport(torch.nn.Module):
    """y = grid_sample(x, affine_grid(theta, size)); size x.size() ("x"), or x's N, C and a
    static spatial size (a tuple).  ours: surgeon.torch; grid_out: the grid is an output too
    (then only the grid is ours, the sampler stays F.grid_sample)."""

    def __init__(self, ours: bool, size="x", mode="bilinear", padding_mode="zeros", align_corners=False,
                 grid_out=False):
        super().__init__()
        self.ours, self.size, self.grid_out = ours, size, grid_out
        self.args = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)

    def forward(self, x, theta):
        size = x.size() if self.size == "x" else [x.shape[0], x.shape[1], *self.size]
        ac = self.args["align_corners"]
        if self.ours and not self.grid_out:
            return st.fused_grid_sample(x, theta, size, **self.args)
        grid = st.affine_grid(theta, size, ac) if self.ours else F.affine_grid(theta, size, align_corners=ac)
        y = F.grid_sample(x, grid, **self.args)
        return (y, grid) if self.grid_out else y


def export(model, args, path, dynamo: bool, dynamic=None, **kwargs) -> onnx.ModelProto:
    """A plain torch.onnx.export; dynamic: None, "batch" or "all" (every dim of x but C)."""
    nsp = args[0].dim() - 2
    spatial = range(2, 2 + nsp) if dynamic == "all" else ()
    names = ["y", "grid"] if getattr(model, "grid_out", False) else ["y"]
    if dynamo:
        dims = {0: torch.export.Dim("N"), **{a: torch.export.Dim("DHW"[a + 1 - nsp]) for a in spatial}}
        extra = {"dynamic_shapes": {"x": dims, "theta": {0: dims[0]}}} if dynamic else {}
    else:
        axes = {0: "N", **{a: "DHW"[a + 1 - nsp] for a in spatial}}
        extra = {"dynamic_axes": {"x": axes, "theta": {0: "N"}}} if dynamic else {}
        extra["opset_version"] = 20  # torch's pair needs AffineGrid (opset 20) with this exporter
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, dynamo=dynamo, input_names=["x", "theta"], output_names=names,
                          **extra, **kwargs)
    assert os.path.exists(path)
    return onnx.load(path)
