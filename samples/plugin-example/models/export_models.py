"""Export the flow-warp spellings the plugin is tested on (run from anywhere; rewrites *.onnx
and manifest.json next to this file). Each model is exported by TorchScript (opset 17) or
dynamo (opset 18), as users of these libraries would.

    python samples/plugin-example/models/export_models.py
"""

import json
import os
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

HERE = os.path.dirname(os.path.abspath(__file__))
X, FLOW = (2, 3, 16, 12), (2, 2, 16, 12)


def basicsr_flow_warp(x, flow, mode="bilinear", padding_mode="zeros", align_corners=True):
    """BasicSR / mmedit ``flow_warp``: pixel-unit flow, meshgrid base, per-channel normalising."""
    _, _, h, w = x.size()
    grid_y, grid_x = torch.meshgrid(torch.arange(0, h).type_as(x), torch.arange(0, w).type_as(x), indexing="ij")
    grid = torch.stack((grid_x, grid_y), 2)
    vgrid = grid + flow.permute(0, 2, 3, 1)
    vgrid_x = 2.0 * vgrid[:, :, :, 0] / max(w - 1, 1) - 1.0
    vgrid_y = 2.0 * vgrid[:, :, :, 1] / max(h - 1, 1) - 1.0
    return F.grid_sample(x, torch.stack((vgrid_x, vgrid_y), dim=3), mode=mode,
                         padding_mode=padding_mode, align_corners=align_corners)


class BasicSR(nn.Module):
    def __init__(self, align_corners=True):
        super().__init__()
        self.ac = align_corners

    def forward(self, x, flow):
        return basicsr_flow_warp(x, flow, align_corners=self.ac)


class Raft(nn.Module):
    """RAFT: coords = coords_grid + flow (channels first), then split, normalise, cat."""

    def forward(self, x, flow):
        _, _, h, w = flow.shape
        ys, xs = torch.meshgrid(torch.arange(h, dtype=x.dtype), torch.arange(w, dtype=x.dtype), indexing="ij")
        coords = (torch.stack([xs, ys], 0)[None] + flow).permute(0, 2, 3, 1)
        xg, yg = coords.split([1, 1], dim=-1)
        grid = torch.cat([2 * xg / (w - 1) - 1, 2 * yg / (h - 1) - 1], dim=-1)
        return F.grid_sample(x, grid, align_corners=True)


class NormalisedRuntimeBase(nn.Module):
    """Normalised flow on a base grid of pixel centres computed from the flow's size."""

    def forward(self, x, flow):
        h, w = flow.shape[-2:]
        ys = (torch.arange(h, dtype=x.dtype) * 2 + 1) / h - 1
        xs = (torch.arange(w, dtype=x.dtype) * 2 + 1) / w - 1
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        base = torch.stack([gx, gy], -1)[None]
        return F.grid_sample(x, base + flow.permute(0, 2, 3, 1), align_corners=False, padding_mode="border")


class FlowHead(nn.Module):
    """The flow comes from a conv head, halved, and warps the input bicubically with reflection."""

    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 2, 3, padding=1)
        with torch.no_grad():
            self.head.weight.copy_(torch.linspace(-0.4, 0.4, 54).reshape(2, 3, 3, 3))
            self.head.bias.zero_()

    def forward(self, x):
        flow = self.head(x) * 0.5
        return basicsr_flow_warp(x, flow, mode="bicubic", padding_mode="reflection")


class TwoWarps(nn.Module):
    """One flow warps two images: the base grid is shared by both samplers."""

    def forward(self, x, x2, flow):
        return basicsr_flow_warp(x, flow), basicsr_flow_warp(x2, flow)


N, H, W = Dim("N"), Dim("H", min=4, max=256), Dim("W", min=4, max=256)
SAMPLES = {
    # file: (module, inputs, exporter, dynamic dims, expected rewrites, what they should say)
    "basicsr_ts_opset17.onnx": (BasicSR(), {"x": X, "flow": FLOW}, "torchscript", "NHW", 1,
                                dict(align_corners=1, flow_units="pixels")),
    "basicsr_dynamo_opset18.onnx": (BasicSR(), {"x": X, "flow": FLOW}, "dynamo", "N", 1,
                                    dict(align_corners=1, flow_units="pixels")),
    "raft_ts_opset17.onnx": (Raft(), {"x": X, "flow": FLOW}, "torchscript", "N", 1,
                             dict(align_corners=1, flow_units="pixels")),
    "raft_dynamo_opset18.onnx": (Raft(), {"x": X, "flow": FLOW}, "dynamo", "NHW", 1,
                                 dict(align_corners=1, flow_units="pixels")),
    "normalised_runtime_base_ts_opset17.onnx": (NormalisedRuntimeBase(), {"x": X, "flow": FLOW}, "torchscript",
                                                "N", 1, dict(align_corners=0, flow_units="normalized",
                                                             padding_mode="border")),
    "flow_head_ts_opset17.onnx": (FlowHead(), {"x": X}, "torchscript", "N", 1,
                                  dict(align_corners=1, flow_units="pixels", mode="bicubic",
                                       padding_mode="reflection")),
    "two_warps_dynamo_opset18.onnx": (TwoWarps(), {"x": X, "x2": (2, 4, 16, 12), "flow": FLOW}, "dynamo", "N", 2,
                                      dict(align_corners=1, flow_units="pixels")),
    "basicsr_ac0_dynamo_opset18.onnx": (BasicSR(align_corners=False), {"x": X, "flow": FLOW}, "dynamo", "N", 0,
                                        dict(refusal="align_corners=1 identity grid")),
}


def _alt(shape, dynamic):
    """A second input shape the dynamic dims must accept."""
    shape = list(shape)
    shape[0] = 3
    if "HW" in dynamic:
        shape[2:] = [10, 14]
    return shape


def export(file, module, inputs, exporter, dynamic):
    args = tuple(torch.rand(*shape) for shape in inputs.values())
    path = os.path.join(HERE, file)
    names = list(inputs)
    if exporter == "torchscript":
        axes = {0: "N", 2: "H", 3: "W"} if "HW" in dynamic else {0: "N"}
        torch.onnx.export(module, args, path, input_names=names, output_names=["y"], opset_version=17,
                          dynamo=False, dynamic_axes={n: axes for n in names})
    else:
        dims = {0: N, 2: H, 3: W} if "HW" in dynamic else {0: N}
        torch.onnx.export(module, args, path, input_names=names, opset_version=18, dynamo=True,
                          dynamic_shapes={n: dims for n in names}, external_data=False)


def main():
    warnings.filterwarnings("ignore")
    manifest = {}
    for file, (module, inputs, exporter, dynamic, rewrites, expect) in SAMPLES.items():
        export(file, module.eval(), inputs, exporter, dynamic)
        manifest[file] = {"inputs": {k: list(v) for k, v in inputs.items()},
                          "alt_inputs": {k: _alt(v, dynamic) for k, v in inputs.items()},
                          "exporter": exporter, "rewrites": rewrites, "expect": expect}
        print("wrote", file)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
