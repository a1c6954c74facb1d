"""TensorRT and the standard GridSample: opset-20 mode names read as nearest, and 5-D samplers."""

from __future__ import annotations

from onnx import helper

from ..report import Hazard
from .facts import GRID_SAMPLE_ISSUE, GRID_SAMPLE_MODES


def _attr(node, name: str, default):
    for a in node.attribute:
        if a.name == name:
            value = helper.get_attribute_value(a)
            return value.decode() if isinstance(value, bytes) else value
    return default


def _rank(view, node) -> int | None:
    dims = view.dims(node.input[0]) if node.input else None
    if dims is not None:
        return len(dims)
    grid = view.dims(node.input[1]) if len(node.input) > 1 else None
    return len(grid) if grid is not None else None


def check(view, ctx):
    command = ctx.tensorrt_command(view)
    fuse = (f"`{command}` moves a sampler an installed pattern covers into a plugin" if command
            else "fuse left this sampler standard (its report says why)")
    for site in view.sites:
        node = site.node
        if site.domain or node.op_type != "GridSample":
            continue
        mode = _attr(node, "mode", "bilinear")
        if mode not in GRID_SAMPLE_MODES:
            old = {v: k for k, v in GRID_SAMPLE_MODES.items()}.get(mode, "bilinear")
            yield Hazard("trt-mode-name", site.name, node.op_type, "",
                         f"TensorRT's parser knows only the opset-16 names bilinear/nearest/bicubic and samples "
                         f"mode '{mode}' as nearest, silently ({GRID_SAMPLE_ISSUE})",
                         f"{fuse}; or {_older(view, ctx)}, where the mode is named '{old}'", site.graph)
        if _rank(view, node) == 5:
            yield Hazard("trt-grid-sample-5d", site.name, node.op_type, "",
                         "TensorRT's grid-sample layer is 4-D only: building the engine fails on this 5-D sampler",
                         f"{fuse} (the plugin samples volumes too)", site.graph)


def _older(view, ctx) -> str:
    """Opset 19 for the whole model: a command when the model holds no custom node (unfuse would
    write those back too) and every node converts (checked on a copy), else re-export."""
    if ctx.after_fuse or any(s.domain for s in view.sites) or ctx.model == "MODEL":
        return "export at opset 16-19"
    if ctx.converts_to(view, 19):
        return f"`surgeon unfuse {ctx.model} {ctx.path('opset19')} --opset 19` converts the model to opset 19"
    return "export at opset 16-19"
