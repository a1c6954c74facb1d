"""Nodes known to compute an affine grid: the standard ``AffineGrid`` (opset 20), the seed's
``custom.ops::AffineGrid`` and the ATen fallback ``affine_grid_generator``.

Their theta input is a cut and their size tensor may give the output size. onnxruntime cannot run
the last two: the probe feeds their analytic grid (torch's semantics). The standard op runs in
onnxruntime like the rest of the region (its size-1 coordinate is then measured, not assumed),
except in float16, which onnxruntime's kernel lacks: then it is emulated with onnxruntime's
float32 behaviour (a size-1 dim with align_corners=1 at +1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnx import TensorProto

from surgeon import MatchContext, Node

from .analytic import ORT, TORCH

CUSTOM_DOMAIN = "custom.ops"


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
    constant_inputs: list[str] = field(default_factory=list)


def written_by(node: Node, pattern_name: str) -> bool:
    return any(p.key == "surgeon.pattern" and p.value == pattern_name for p in node.proto.metadata_props)


def read_known_grid(ctx: MatchContext, node: Node, pattern_name: str) -> KnownGrid | None:
    inputs = node.inputs
    if not inputs or not inputs[0]:
        return None
    if node.is_op("AffineGrid") and len(inputs) >= 2 and inputs[1]:
        runs = ctx.dtype(inputs[0]) in (TensorProto.FLOAT, TensorProto.DOUBLE)
        return KnownGrid(node, inputs[0], inputs[1], None, int(node.attr("align_corners", 0)), ORT, emulated=not runs)
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
