"""Nodes known to compute an affine grid: the standard ``AffineGrid`` (opset 20), the seed's
``custom.ops::AffineGrid`` and the ATen fallback ``affine_grid_generator``.

Their theta input is a cut and their size tensor may give the output size. onnxruntime cannot run
the last two: the probe feeds their analytic grid (torch's semantics). The standard op runs in
onnxruntime like the rest of the region when theta's value is float32 or double (its size-1
coordinate is then measured, not assumed). In float16 (decided on the value the probe computes,
not on declared types, which may be stale) onnxruntime has no kernel and runs the op's function
body: it is emulated as that body computes, a size-1 dim with align_corners=1 at NaN (0/0, not
the float32 kernel's +1), and a size whose N is not theta's refused as the kernel does.
``GridRunner`` runs a cut region (``surgeon.recognise.RegionRunner``) with that emulation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from surgeon import MatchContext, Node
from surgeon.recognise import DoesNotRun, RegionRunner

from surgeon_ops.grid_math import TORCH, affine_grid
from surgeon_ops.grid_rules import DOMAIN

FUNCTION_BODY = float("nan")  # onnxruntime's float16 AffineGrid: a size-1 dim with align_corners=1

CUSTOM_DOMAIN = DOMAIN


@dataclass
class KnownGrid:
    node: Node
    theta: str
    size: str | None  # int64 [N, C, *spatial] value; None when ``output_size`` says it
    output_size: list[int] | None
    align_corners: int
    size_one: float  # where the emulation puts a size-1 dim's coordinate with align_corners=1
    ours: bool = False  # written by this pattern in an earlier pass
    emulated: bool = True  # the probe feeds its analytic grid (False: onnxruntime computes it)
    half_only: bool = False  # emulated only when theta's value is not float32/double
    constant_inputs: list[str] = field(default_factory=list)


def written_by(node: Node, pattern_name: str) -> bool:
    return any(p.key == "surgeon.pattern" and p.value == pattern_name for p in node.proto.metadata_props)


def read_known_grid(ctx: MatchContext, node: Node, pattern_name: str) -> KnownGrid | None:
    inputs = node.inputs
    if not inputs or not inputs[0]:
        return None
    if node.is_op("AffineGrid") and len(inputs) >= 2 and inputs[1]:
        return KnownGrid(node, inputs[0], inputs[1], None, int(node.attr("align_corners", 0)), FUNCTION_BODY,
                         half_only=True)
    if node.is_op("AffineGrid", CUSTOM_DOMAIN):
        size = inputs[1] if len(inputs) > 1 and inputs[1] else None
        output_size = node.attr("output_size")
        if size is None and not output_size:
            return None
        return KnownGrid(node, inputs[0], size, list(output_size) if size is None else None,
                         int(node.attr("align_corners", 0)), TORCH, ours=written_by(node, pattern_name))
    if node.op_type == "ATen" and node.attr("operator") == "affine_grid_generator" and len(inputs) >= 3:
        flag = ctx.constant(inputs[2])
        if flag is None or flag.size != 1:
            return None
        return KnownGrid(node, inputs[0], inputs[1], None, int(bool(flag.reshape(-1)[0])), TORCH,
                         constant_inputs=[inputs[2]])
    return None


class GridRunner(RegionRunner):
    def emulate(self, feeds: dict) -> dict:
        """Adds to ``feeds`` the analytic grid of every known grid op onnxruntime cannot run;
        returns each known op's size tensor (list of ints) by its index in ``computed``."""
        sizes = {}
        for i, op in enumerate(self.region.computed):
            if op.size is not None:
                sizes[i] = [int(s) for s in np.asarray(self.value(op.size, feeds)).reshape(-1)]
                spatial = sizes[i][2:]
            else:
                spatial = list(op.output_size)
            if not op.emulated:
                continue  # onnxruntime computes it with the rest of the region
            raw = np.asarray(self.value(op.theta, feeds))
            if op.half_only and raw.dtype in (np.float32, np.float64):
                continue  # onnxruntime's kernel computes it with the rest of the region
            op_theta = raw.astype(np.float64)
            if op_theta.ndim != 3 or op_theta.shape[1] != len(spatial) or min(spatial, default=1) < 0:
                raise DoesNotRun(f"{op.node.label}: theta {op_theta.shape} does not fit size {spatial}")
            if op.half_only and sizes.get(i, [op_theta.shape[0]])[0] != op_theta.shape[0]:
                raise DoesNotRun(f"{op.node.label}: size N {sizes[i][0]} is not theta's {op_theta.shape[0]}")
            with np.errstate(invalid="ignore"):
                grid = affine_grid(op_theta, spatial, bool(op.align_corners), op.size_one)
            # every known grid op's output has theta's type: a declared type may be stale (the
            # plan refuses a declaration the computed grid contradicts)
            out = raw.dtype if raw.dtype.kind == "f" else self.dtype
            feeds[op.node.outputs[0]] = grid.astype(out)
        return sizes
