"""``to_standard`` for the two contract ops: one node written back as standard ONNX at a given
default-domain opset, for ``surgeon unfuse``.

opset >= 20: ``AffineGrid`` + ``GridSample`` (opset-20 mode names); 16-19: the grid from
standard ops + ``GridSample`` (opset-16 names), or, for a volume (GridSample is 4-D only there),
the sampler written with gathers (``surgeon.sample_by_gathers``). A dynamic size (the ``size``
input) stays a run-time value.
"""

from __future__ import annotations

from onnx import TensorProto

from surgeon import Node, RewriteContext

from .emit import GraphEmitter
from . import onnx_grid
from .onnx_grid import MODES, PADDINGS, Size, grid_sample, unexpressible


def _input(node: Node, i: int) -> str | None:
    return node.inputs[i] if len(node.inputs) > i and node.inputs[i] else None


def _settings(node: Node, size_input: str | None) -> tuple[dict, str | None]:
    """The node's attributes, checked against the contract; a reason when they break it."""
    output_size = node.attr("output_size")
    found = {"align": int(node.attr("align_corners", 0)), "mode": node.attr("mode", "bilinear"),
             "padding": node.attr("padding_mode", "zeros"),
             "output_size": [int(d) for d in output_size] if output_size else None}
    if (size_input is None) == (found["output_size"] is None):
        return found, "needs exactly one of the size input and the output_size attribute"
    if found["mode"] not in MODES:
        return found, f"unknown mode {found['mode']!r}"
    if found["padding"] not in PADDINGS:
        return found, f"unknown padding_mode {found['padding']!r}"
    if found["align"] not in (0, 1):
        return found, f"align_corners must be 0 or 1, not {found['align']}"
    return found, None


def _spatial_rank(ctx: RewriteContext, output_size, size: str | None, image: str | None, theta: str) -> int | None:
    """2 or 3, from whichever of the node's values says it."""
    if output_size:
        return len(output_size)
    size_shape = ctx.shape(size) if size else None
    if size_shape and isinstance(size_shape[0], int):
        return size_shape[0] - 2
    image_shape = ctx.shape(image) if image else None
    if image_shape:
        return len(image_shape) - 2
    theta_shape = ctx.shape(theta)
    if theta_shape and len(theta_shape) == 3 and isinstance(theta_shape[1], int):
        return theta_shape[1]
    return None


def fused_grid_sample(ctx: RewriteContext, node: Node, opset: int) -> str | None:
    x, theta, size_input = _input(node, 0), _input(node, 1), _input(node, 2)
    if x is None or theta is None:
        return "needs the image and theta inputs"
    settings, reason = _settings(node, size_input)
    k = _spatial_rank(ctx, settings["output_size"], size_input, x, theta)
    if k not in (2, 3):
        return reason or "cannot tell whether it samples in 2-D or 3-D (no shapes)"
    reason = reason or unexpressible(opset, k, sampler=True, gathers=True)
    if reason:
        return reason
    em = GraphEmitter(ctx, node.name or "FusedGridSample")
    size = Size(settings["output_size"], lambda: size_input or em.op(
        "Concat", [em.op("Shape", [x], start=0, end=2), em.const(settings["output_size"])], axis=0))
    half = _half(ctx, x)
    theta, image = (onnx_grid.in_float32(em, theta), onnx_grid.in_float32(em, x)) if half else (theta, x)
    grid = onnx_grid.affine_grid(em, theta, size, k, settings["align"], opset)
    y = grid_sample(em, image, grid, settings["mode"], settings["padding"], settings["align"], opset,
                    out=None if half else node.outputs[0], k=k)
    if half:
        em.op("CastLike", [y, x], out=node.outputs[0])
    return None


def affine_grid(ctx: RewriteContext, node: Node, opset: int) -> str | None:
    theta, size_input = _input(node, 0), _input(node, 1)
    if theta is None:
        return "needs the theta input"
    settings, reason = _settings(node, size_input)
    k = _spatial_rank(ctx, settings["output_size"], size_input, None, theta)
    if k not in (2, 3):
        return reason or "cannot tell whether the grid is 2-D or 3-D (no shapes)"
    reason = reason or unexpressible(opset, k, sampler=False)
    if reason:
        return reason
    em = GraphEmitter(ctx, node.name or "AffineGrid")
    # The standard op reads N from the size; C is not used.
    size = Size(settings["output_size"], lambda: size_input or em.op(
        "Concat", [em.op("Shape", [theta], start=0, end=1), em.const([1, *settings["output_size"]])], axis=0))
    half = _half(ctx, theta)
    grid = onnx_grid.affine_grid(em, onnx_grid.in_float32(em, theta) if half else theta, size, k, settings["align"],
                                 opset, out=None if half else node.outputs[0])
    if half:
        em.op("CastLike", [grid, theta], out=node.outputs[0])
    return None


def _half(ctx: RewriteContext, value: str) -> bool:
    """float16 (or unknown) values are computed in float32 and cast back (see onnx_grid.in_float32);
    float32 ones are written as they are."""
    return ctx.dtype(value) != TensorProto.FLOAT
