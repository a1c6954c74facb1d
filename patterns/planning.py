"""From a verdict to a plan: the form to write (fused, or a grid for a sampler that stays), the
pieces of the size and of theta's batch, the declared output dims, and the report's warnings."""

from __future__ import annotations

from onnx import TensorProto

from surgeon import MatchContext

from .analytic import ONNX
from .probe import Verdict
from .recognise import Recognition
from .samplers import Sampler
from .symbols import Symbols
from .writer import Plan

FUSED, AFFINE = "fused-grid-sample", "affine-grid"
TARGETS = (FUSED, AFFINE)


def _piece(symbols: Symbols, dim: tuple):
    """A size piece for a probe dim: a constant, or the dim of a value that carries it."""
    if dim[0] == "static":
        return ("const", dim[1])
    if dim[0] == "computed":
        return dim
    sources = symbols.sources(dim[1])
    return ("dim", *sources[0]) if sources else None


def make_plan(ctx: MatchContext, sampler: Sampler, found: Recognition, target: str, readers: list[str]) -> Plan | str:
    theta, symbols, verdict = found.theta, found.symbols, found.verdict
    k = verdict.k
    if sampler.mode == "bicubic" and k == 3:
        return "bicubic sampling of a volume (torch supports bicubic in 2-D only)"
    warnings = []
    form = "fused"
    if target == AFFINE:
        form = "grid"
    elif readers:
        form = "grid"
        warnings.append(f"not fused: the grid is also read by {', '.join(readers[:3])}; "
                        "wrote custom.ops::AffineGrid and kept the sampler")
    elif verdict.align_corners != sampler.align_corners:
        form = "grid"
        warnings.append(f"not fused: the grid uses align_corners={verdict.align_corners} and the sampler "
                        f"{sampler.align_corners}; wrote custom.ops::AffineGrid and kept the sampler")
    image_dims = symbols.owners[sampler.x].dims
    image_decl = ctx.shape(sampler.x) or (None,) * (k + 2)
    elem = ctx.dtype(sampler.x) or TensorProto.FLOAT
    if form == "grid":
        elem = ctx.dtype(sampler.grid) or elem
    theta_elem = ctx.dtype(theta) if theta else None
    batch = _piece(symbols, verdict.batch)
    if batch is not None and batch[0] == "dim" and image_dims and image_dims[0] == verdict.batch:
        batch = ("dim", sampler.x, 0)
    channels = ("dim", sampler.x, 1)  # only used in a dynamic size, where Shape(x) is read anyway
    spatial = [_piece(symbols, d) for d in verdict.spatial]
    if batch is None or None in spatial:
        return "cannot name the tensors whose dims the output size follows"
    if verdict.theta_batch == verdict.batch:
        broadcast = None
    elif verdict.theta_batch == ("static", 1):
        broadcast = batch
    else:
        return "theta's batch neither matches the grid's nor broadcasts from 1"

    def dim_name(d):
        return d[1] if d[0] == "static" else None if d[0] == "computed" else symbols.dim_name(d[1])

    out_dims = [dim_name(verdict.batch), image_decl[1], *(dim_name(d) for d in verdict.spatial)]
    warnings += _warnings(symbols, verdict)
    return Plan(
        form=form, image=sampler.x, theta=theta, grid=sampler.grid,
        output=sampler.node.outputs[0] if sampler.node.outputs else None, k=k,
        layout=found.layout, align_corners=verdict.align_corners, mode=sampler.mode,
        padding_mode=sampler.padding_mode, cast_to=elem if theta_elem not in (None, elem) else None,
        elem_type=elem, broadcast=broadcast, batch=batch, channels=channels, spatial=spatial,
        out_dims=out_dims, rewrite_sampler=form == "grid" and sampler.kind == "aten",
        sampler_align_corners=sampler.align_corners, opset=ctx.opset("") or 0, warnings=warnings,
        theta_value=found.theta_value,
        size_value=found.trace.known[verdict.size_from].size if verdict.size_from is not None else None,
        theta_map=verdict.theta_map,
    )


def _warnings(symbols: Symbols, verdict: Verdict) -> list[str]:
    out = []
    for cls, value in verdict.pinned.items():
        out.append(f"the original only runs with {symbols.name(cls)}={value} (sizes baked into its constants); "
                   "the rewrite is written for that size")
    if verdict.align_corners == 1:
        if verdict.convention == ONNX:
            out.append("align_corners=1 with an output dim of size 1: the original puts that coordinate at -1 "
                       "(ONNX), the custom op at 0 (torch): outputs change")
        names = ", ".join(symbols.name(d[1]) for d in verdict.spatial if d[0] == "class")
        if verdict.size_one == ONNX:
            out.append(f"align_corners=1: when {names} is 1 at run time, the original puts that coordinate at -1 "
                       "(ONNX), the custom op at 0 (torch): outputs change on such inputs")
        elif verdict.size_one == "unchecked":
            out.append(f"align_corners=1 with dynamic {names}: size 1 could not be probed; ONNX and torch "
                       "disagree there")
    return out
