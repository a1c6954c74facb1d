"""Nodes known to compute an affine grid: the standard ``AffineGrid`` (opset 20), the seed's
``custom.ops::AffineGrid`` and the ATen fallback ``affine_grid_generator``.

The trace treats their outputs as leaves computed analytically (onnxruntime cannot run the last
two), so whatever sits between them and the sampler is still checked by evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from surgeon import MatchContext, Node

from .analytic import ONNX, TORCH

CUSTOM_DOMAIN = "custom.ops"


@dataclass
class KnownGrid:
    node: Node
    theta: str
    size: str | None  # int64 [N, C, *spatial] value; None when ``output_size`` says it
    output_size: list[int] | None
    align_corners: int
    convention: str  # size-1 convention: the standard op follows ONNX, the others torch
    ours: bool = False  # written by this pattern in an earlier pass
    constant_inputs: list[str] = field(default_factory=list)


def written_by(node: Node, pattern_name: str) -> bool:
    return any(p.key == "surgeon.pattern" and p.value == pattern_name for p in node.proto.metadata_props)


def read_known_grid(ctx: MatchContext, node: Node, pattern_name: str) -> KnownGrid | None:
    inputs = node.inputs
    if not inputs or not inputs[0]:
        return None
    if node.is_op("AffineGrid") and len(inputs) >= 2 and inputs[1]:
        return KnownGrid(node, inputs[0], inputs[1], None, int(node.attr("align_corners", 0)), ONNX)
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
