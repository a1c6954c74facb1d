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
    return _write(ctx, node, opset, theta, size_input, x)


def affine_grid(ctx: RewriteContext, node: Node, opset: int) -> str | None:
    theta, size_input = _input(node, 0), _input(node, 1)
    if theta is None:
        return "needs the theta input"
    return _write(ctx, node, opset, theta, size_input, None)


def _write(ctx: RewriteContext, node: Node, opset: int, theta: str, size_input: str | None,
           x: str | None) -> str | None:
    """Either op: the sampler when ``x`` (the image) is given, else the grid alone; or why it
    cannot be written at this opset."""
    settings, reason = _settings(node, size_input)
    k = _spatial_rank(ctx, settings["output_size"], size_input, x, theta)
    if k not in (2, 3):
        what = "it samples in" if x else "the grid is"
        return reason or f"cannot tell whether {what} 2-D or 3-D (no shapes)"
    reason = reason or unexpressible(opset, k, sampler=x is not None, gathers=True)
    if reason:
        return reason
    em = GraphEmitter(ctx, node.name or ("FusedGridSample" if x else "AffineGrid"))
    size = Size(settings["output_size"], lambda: size_input or _size_tensor(em, x, theta, settings["output_size"]))
    typed = x or theta  # the output has its type
    half = _half(ctx, typed)
    theta_in, x_in = (onnx_grid.in_float32(em, theta), x and onnx_grid.in_float32(em, x)) if half else (theta, x)
    out = None if half else node.outputs[0]
    result = onnx_grid.affine_grid(em, theta_in, size, k, settings["align"], opset, out=None if x else out)
    if x:
        result = grid_sample(em, x_in, result, settings["mode"], settings["padding"], settings["align"], opset,
                             out=out, k=k)
    if half:
        em.op("CastLike", [result, typed], out=node.outputs[0])
    return None


def _size_tensor(em: GraphEmitter, x: str | None, theta: str, output_size: list[int]) -> str:
    """``[N, C, *output_size]``: N and C from the image; for the grid alone N from theta and a C
    of 1 (the standard AffineGrid reads N from the size, and not C)."""
    if x:
        return em.op("Concat", [em.op("Shape", [x], start=0, end=2), em.const(output_size)], axis=0)
    return em.op("Concat", [em.op("Shape", [theta], start=0, end=1), em.const([1, *output_size])], axis=0)


def _half(ctx: RewriteContext, value: str) -> bool:
    """float16 (or unknown) values are computed in float32 and cast back (see onnx_grid.in_float32);
    float32 ones are written as they are."""
    return ctx.dtype(value) != TensorProto.FLOAT
