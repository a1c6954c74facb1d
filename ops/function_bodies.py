"""``function`` for the two contract ops: model-local FunctionProto bodies, so runtimes that
inline functions (onnxruntime, ``onnx.reference``) run a fused file with no op library.

Traps measured (FACTS.md, "Deploying") and how the bodies step around them:
- inputs are fixed, so a body is per arity: the engine refuses a model needing two;
- GridSample's mode names change at opset 20: there the body picks the name with
  ``RegexFullMatch`` + ``If`` (a string ``Equal`` trips the reference evaluator's dtype check);
- the reference evaluator reads a referenced ``align_corners`` of 0 as true
  (``align_corners or self.align_corners``): the body branches on it and writes it literally;
- declared attribute defaults are not applied by the reference evaluator or the inliners:
  declared anyway, and surgeon writes them on every node;
- onnxruntime has no float16 kernel for AffineGrid and falls back to ONNX's own function body
  for it, which fails ("Split axis 1 not in range", "Input to 'Range' op should be scalars"):
  the body computes in float32 (``onnx_grid.in_float32``) and casts the result to the input's
  type; for float32 inputs the casts change nothing.
"""

from __future__ import annotations

from typing import Sequence

from onnx import AttributeProto, FunctionProto, TensorProto

from .emit import FunctionEmitter, Ref
from . import onnx_grid
from .onnx_grid import Size, grid_sample, unexpressible

DOMAIN = "custom.ops"
_DEFAULTS = {"align_corners": 0, "mode": "bilinear", "padding_mode": "zeros"}
_PADDING = Ref("padding_mode", AttributeProto.STRING)


def _rank(shapes: Sequence, image: int | None, theta: int) -> int | None:
    """Spatial dims from the image's rank or theta's ``[N, k, k+1]``; None when unknown."""
    if image is not None and image < len(shapes) and shapes[image] is not None:
        return len(shapes[image]) - 2
    dims = shapes[theta] if theta < len(shapes) else None
    return dims[1] if dims is not None and len(dims) == 3 and isinstance(dims[1], int) else None


def _size(em: FunctionEmitter, arity: int, full: int, source: str, leading: int, pad: list[int]) -> Size:
    """The size input, or ``[*Shape(source)[:leading], *pad, *output_size]``."""
    if arity == full:
        return Size(None, lambda: "size")
    parts = [em.op("Shape", [source], start=0, end=leading)]
    if pad:
        parts.append(em.const(pad))
    parts.append(em.attr("value_ints", Ref("output_size", AttributeProto.INTS)))
    tensor = em.op("Concat", parts, axis=0)
    return Size(None, lambda: tensor)


def _align_switch(em: FunctionEmitter, build, output: str) -> None:
    """``output = build(branch, align)`` with align_corners written literally in each branch."""
    flag = em.op("Cast", [em.attr("value_int", Ref("align_corners", AttributeProto.INT))], to=TensorProto.BOOL)
    branches = {}
    for align in (1, 0):
        branch = em.branch()
        branches[align] = branch.graph(build(branch, align), f"align_corners_{align}")
    em.op("If", [flag], out=output, then_branch=branches[1], else_branch=branches[0])


def _sampler(em: FunctionEmitter, image: str, grid: str, align: int, opset: int, linear: str | None,
             cubic: str | None) -> str:
    if opset < 20:  # opset-16 names are the contract's (torch's): the attribute passes through
        return grid_sample(em, image, grid, Ref("mode", AttributeProto.STRING), _PADDING, align, opset)

    def leaf(parent: FunctionEmitter, name: str):
        branch = parent.branch()
        return branch.graph(grid_sample(branch, image, grid, name, _PADDING, align, opset), name)

    rest = em.branch()
    chosen = rest.op("If", [cubic], then_branch=leaf(rest, "cubic"), else_branch=leaf(rest, "nearest"))
    return em.op("If", [linear], then_branch=leaf(em, "linear"), else_branch=rest.graph(chosen, "not_linear"))


def fused_grid_sample(opset: int, shapes: Sequence) -> FunctionProto | str:
    arity = len(shapes)
    k = _rank(shapes, 0, 1)
    reason = unexpressible(opset, k, sampler=True)
    if reason:
        return reason
    k = k or 2  # before opset 20 only 2-D can be written; from 20 on the ops take any rank
    em = FunctionEmitter()
    size = _size(em, arity, 3, "X", 2, [])
    linear = cubic = None
    if opset >= 20:
        mode = em.attr("value_string", Ref("mode", AttributeProto.STRING))
        linear = em.op("RegexFullMatch", [mode], pattern="bilinear|linear")
        cubic = em.op("RegexFullMatch", [mode], pattern="bicubic|cubic")

    theta, image = onnx_grid.in_float32(em, "theta"), onnx_grid.in_float32(em, "X")

    def body(branch: FunctionEmitter, align: int) -> str:
        grid = onnx_grid.affine_grid(branch, theta, size, k, align, opset)
        return _sampler(branch, image, grid, align, opset, linear, cubic)

    _align_switch(em, body, "Y32")
    em.op("CastLike", ["Y32", "X"], out="Y")
    inputs = ["X", "theta"] + (["size"] if arity == 3 else [])
    return em.function(DOMAIN, "FusedGridSample", inputs, ["Y"], opset,
                       [] if arity == 3 else ["output_size"], _DEFAULTS)


def affine_grid(opset: int, shapes: Sequence, name: str = "AffineGrid") -> FunctionProto | str:
    """``name``: the op type the body is for (the TensorRT profile writes the op as AffineGridPlugin)."""
    arity = len(shapes)
    k = _rank(shapes, None, 0)
    reason = unexpressible(opset, k, sampler=False)
    if reason:
        return reason
    if k is None and opset < 20:
        return "theta's shape is unknown: cannot tell a 2-D grid from a 3-D one before opset 20"
    em = FunctionEmitter()
    size = _size(em, arity, 2, "theta", 1, [1])
    theta = onnx_grid.in_float32(em, "theta")
    _align_switch(em, lambda b, align: onnx_grid.affine_grid(b, theta, size, k or 2, align, opset), "grid32")
    em.op("CastLike", ["grid32", "theta"], out="grid")
    inputs = ["theta"] + (["size"] if arity == 2 else [])
    return em.function(DOMAIN, name, inputs, ["grid"], opset, [] if arity == 2 else ["output_size"],
                       {"align_corners": 0})
