"""Grid samplers in every spelling the exporters write, read into one description.

- ``GridSample`` (opset 16-19 names ``bilinear|nearest|bicubic``, opset 20+ ``linear|nearest|cubic``;
  dynamo writes ``bilinear`` for 5-D at opset 18 too),
- ``com.microsoft::GridSample`` (onnxruntime's contrib op, torch names),
- ATen fallback ``ATen(operator="grid_sampler")`` with its modes as constant inputs
  ``(input, grid, interpolation_mode, padding_mode, align_corners)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from surgeon import MatchContext, Node
from surgeon_ops.onnx_grid import MODES, PADDINGS  # any spelling -> the contract's (torch) names

ANCHOR_OPS = ("GridSample", "com.microsoft::GridSample", "org.pytorch.aten::ATen", "ATen", "com.microsoft::ATen")

# torch's enums, as the ATen fallback passes them.
_ATEN_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_ATEN_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}


@dataclass
class Sampler:
    node: Node
    x: str
    grid: str
    mode: str  # torch name
    padding_mode: str
    align_corners: int
    kind: str  # "onnx", "ms" or "aten"
    constant_inputs: list[str] = field(default_factory=list)  # ATen's mode inputs


def is_aten(node: Node, operator: str) -> bool:
    return node.op_type == "ATen" and node.attr("operator") == operator


def read_sampler(ctx: MatchContext, node: Node) -> Sampler | str | None:
    """The sampler's inputs and settings; a reason string when they cannot be read; None when
    the node is not a grid sampler at all (another ATen operator)."""
    if node.op_type == "ATen":
        if not is_aten(node, "grid_sampler"):
            return None
        return _read_aten(ctx, node)
    if len(node.inputs) < 2 or not node.inputs[0] or not node.inputs[1]:
        return "grid sampler without an image or a grid input"
    kind = "ms" if node.domain == "com.microsoft" else "onnx"
    default_mode = "linear" if kind == "onnx" and (ctx.opset("") or 0) >= 20 else "bilinear"
    mode = node.attr("mode", default_mode)
    padding = node.attr("padding_mode", "zeros")
    if mode not in MODES:
        return f"unknown sampling mode {mode!r}"
    if padding not in PADDINGS:
        return f"unknown padding mode {padding!r}"
    return Sampler(node, node.inputs[0], node.inputs[1], MODES[mode], padding,
                   int(node.attr("align_corners", 0)), kind)


def _read_aten(ctx: MatchContext, node: Node) -> Sampler | str:
    if len(node.inputs) < 5:
        return "ATen grid_sampler with fewer than 5 inputs"
    values = []
    for name in node.inputs[2:5]:
        value = ctx.constant(name)
        if value is None or value.size != 1:
            return f"ATen grid_sampler setting {name!r} is not a constant scalar"
        values.append(int(value.reshape(-1)[0]))
    mode, padding, align = values
    if mode not in _ATEN_MODES or padding not in _ATEN_PADDINGS:
        return f"ATen grid_sampler with unknown interpolation/padding enum ({mode}, {padding})"
    return Sampler(node, node.inputs[0], node.inputs[1], _ATEN_MODES[mode], _ATEN_PADDINGS[padding],
                   int(bool(align)), "aten", constant_inputs=list(node.inputs[2:5]))

