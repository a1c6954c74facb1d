"""Step 4, plan: what to write for a recognised grid. From a verdict to a plan: the form (fused,
or a grid for a sampler that stays), the pieces of the size and of theta's batch, the declared
output dims, the theta elements the rewrite may read, and the report's warnings; or a refusal
where the rewrite could not be equal (types the contract cannot hold, precision it would lose)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from surgeon import MatchContext, Refusal
from surgeon.recognise import Computed, DimOf, ElemOf, Fixed, Follows, Piece, Static, dim_piece
from surgeon_ops.tensorrt import profile as tensorrt_profile

from .recognise import Recognition
from .samplers import Sampler
from .verdict import Verdict, stale_grid_type
from .write import Plan

# A grid rounded to half precision moves samples by a few 2^-11 of the image's half-width, so
# in pixels by an amount that grows with the image: a rewrite computing it exactly differs from
# the original by up to RATE * (largest image dim) on validate's images in [-1, 1] (measured on
# validate's thetas: bilinear 1.6e-3/px at 256 px, bicubic 2.2e-3/px). Declared with margin,
# never below HALF_GRID_ATOL; past HALF_GRID_CEILING (1/16 of that range) it is no equality at
# all. Reflection is refused: it folds coordinates from far outside, where half rounds by whole
# pixels, back into the image, so no rate bounds it.
HALF_GRID_ATOL = 2e-2
HALF_GRID_RATE = {"bilinear": 2e-3, "bicubic": 3.5e-3}
HALF_GRID_CEILING = 0.125

FUSED, AFFINE, TENSORRT = "fused-grid-sample", "affine-grid", "tensorrt"
TARGETS = (FUSED, AFFINE, TENSORRT)  # tensorrt: the fused form in the TensorRT profile (surgeon_ops.tensorrt)
# Engines that run the contract's own ops (an op library, an extension): their name asks for the
# fused form.
ENGINE_FORMS = {"onnxruntime": FUSED, "openvino": FUSED}


def make_plan(ctx: MatchContext, sampler: Sampler, found: Recognition, target: str,
              readers: list[str]) -> Plan | Refusal:
    plan = _plan(ctx, sampler, found, target, readers)
    return Refusal(plan) if isinstance(plan, str) else plan


def _plan(ctx: MatchContext, sampler: Sampler, found: Recognition, target: str, readers: list[str]) -> Plan | str:
    theta, symbols, verdict = found.theta, found.symbols, found.verdict
    k = verdict.k
    if sampler.mode == "bicubic" and k == 3:
        return "bicubic sampling of a volume (torch supports bicubic in 2-D only)"
    warnings = []
    form = "fused"
    grid_op = f"custom.ops::{tensorrt_profile.op_type('AffineGrid') if target == TENSORRT else 'AffineGrid'}"
    if readers and verdict.nan_at_one:  # a NaN a reader sees is a value, not an engine's accident
        return (f"with {verdict.nan_at_one[0]} the original's grid is NaN (0/0 in its coordinates), and "
                f"{', '.join(readers[:3])} reads it besides the sampler")
    if target == AFFINE:
        form = "grid"
    elif readers:
        form = "grid"
        warnings.append(f"not fused: the grid is also read by {', '.join(readers[:3])}; "
                        f"wrote {grid_op} and kept the sampler")
    elif verdict.align_corners != sampler.align_corners:
        form = "grid"
        warnings.append(f"not fused: the grid uses align_corners={verdict.align_corners} and the sampler "
                        f"{sampler.align_corners}; wrote {grid_op} and kept the sampler")
    image_decl = ctx.shape(sampler.x) or (None,) * (k + 2)
    elem = ctx.dtype(sampler.x) or TensorProto.FLOAT
    if form == "grid":
        elem = ctx.dtype(sampler.grid) or elem
    native_type = None
    if elem not in _CONTRACT_TYPES:
        what = "grid" if form == "grid" else "image"
        why = (f"the {what} is {TensorProto.DataType.Name(elem).lower()}: custom.ops ops take float32 or float16 "
               "(ops/OPS.md)")
        native_type = _native(ctx, verdict, why, target) if elem == TensorProto.DOUBLE else why
        if isinstance(native_type, str):
            return native_type
    stale = stale_grid_type(ctx.dtype(sampler.grid), verdict.grid_dtype)
    if stale:  # a verdict shared by identical chains: this chain's declared type is checked here
        return stale
    theta_elem = ctx.dtype(theta) if theta else None
    if verdict.theta_value is not None:  # fitted to a constant grid: its precision is the grid's
        theta_elem = helper.np_dtype_to_tensor_dtype(verdict.grid_dtype) if verdict.grid_dtype else TensorProto.FLOAT
    narrow = _narrowing(verdict, theta_elem, native_type or elem)
    if narrow:  # a grid computed in double before a float image: ONNX's own AffineGrid computes it so too
        native_type = _native(ctx, verdict, narrow, target)
        if isinstance(native_type, str):
            return native_type
    if native_type is not None:
        name = lambda t: TensorProto.DataType.Name(t).lower()  # noqa: E731
        why = ("the image is double, which the contract's ops (float32, float16) do not take" if elem == TensorProto.DOUBLE
               else f"the grid is computed in {name(native_type)} before a {name(elem)} image, and the contract's "
                    "ops take theta in the image's type (rounding it)")
        warnings.append(f"wrote ONNX's own AffineGrid + GridSample: {why}")
    size_value = found.cut.computed[verdict.size_from].size if verdict.size_from is not None else None
    # The sampler needs the grid's batch to be the image's: the image's batch is the size's N.
    # The size reads N and C from Shape(x) even where they are static (one Shape for all).
    batch, channels = DimOf(sampler.x, 0), DimOf(sampler.x, 1)
    spatial = [symbols.piece(d, size_value, 2 + i) for i, d in enumerate(verdict.spatial)]
    if target == TENSORRT:  # a plugin takes its size as an attribute: a pinned size is the one with items
        spatial = [Fixed(verdict.pinned[d.cls]) if isinstance(d, Follows) and d.cls in verdict.pinned else p
                   for p, d in zip(spatial, verdict.spatial)]
    if None in spatial:
        return "cannot name the tensors whose dims the output size follows"
    if target == TENSORRT and any(not isinstance(p, Fixed) for p in spatial):  # plugins get dims, not values
        data = next((p.value for p in spatial if isinstance(p, ElemOf)), None)
        return ("target tensorrt: the output size is only known at run time, and a TensorRT plugin takes it as a "
                "static attribute; " + (f"it is read from the values of {data!r}, which must become constants"
                                        if data else "fix the input dims (--input-shape NAME:D1,D2,...) so it folds"))
    broadcast = _broadcast(verdict, dim_piece(image_decl, sampler.x, 0))
    if isinstance(broadcast, str):
        return broadcast

    def dim_name(d):
        return d.n if isinstance(d, Static) else None if isinstance(d, Computed) else symbols.dim_name(d.cls)

    n_name = image_decl[0] if image_decl[0] is not None else dim_name(verdict.batch)
    out_dims = [n_name, image_decl[1], *(dim_name(d) for d in verdict.spatial)]
    for cls, value in verdict.pinned.items():
        if cls not in verdict.empty_follows:
            warnings.append(f"the original only runs with {symbols.name(cls, value)} (sizes baked into its "
                            "constants); the rewrite is written for that size")
        elif target == TENSORRT:
            warnings.append(f"the original only runs with {symbols.name(cls, value)} while it has items (with none, "
                            "its output follows the input's size); the plugin is written for that size")
    warnings += verdict.notes
    atol = None
    if verdict.precision in _HALF:
        # also when the rewrite's type is half: the op rounds once, the original at every step
        atol = half_grid_atol(ctx, sampler, verdict.precision)
        if isinstance(atol, str):
            return atol
        how = "in float32" if elem == TensorProto.FLOAT else "rounded once"
        warnings.append(f"the original computes the grid in {verdict.precision} precision, the rewrite {how} "
                        f"from the same theta: outputs differ by up to ~{atol / 2:.2g} per unit of image range "
                        f"(validate holds it to atol {atol:g})")
    read_columns = _read_columns(verdict, found.layout)
    if isinstance(read_columns, str):
        return read_columns
    return Plan(atol=atol, read_columns=read_columns,
        form=form, image=sampler.x, theta=theta, grid=sampler.grid,
        output=sampler.node.outputs[0] if sampler.node.outputs else None, k=k,
        layout=found.layout, align_corners=verdict.align_corners, mode=sampler.mode,
        padding_mode=sampler.padding_mode, native_type=native_type,
        sampled_grid_type=ctx.dtype(sampler.grid) or elem if native_type else None,
        cast_to=(native_type or elem) if theta_elem not in (None, native_type or elem) else None,
        elem_type=elem, broadcast=broadcast, batch=batch, channels=channels, spatial=spatial,
        out_dims=out_dims, rewrite_sampler=form == "grid" and sampler.kind == "aten",
        sampler_align_corners=sampler.align_corners, opset=ctx.opset("") or 0, warnings=warnings,
        theta_value=verdict.theta_value, size_value=size_value if verdict.size_exact else None,
        theta_map=verdict.theta_map, size_one=dict(verdict.size_one), theta_scaling=verdict.theta_scaling,
        scaling_pieces=[symbols.piece(Follows(rep)) for rep in verdict.theta_scaling.reps]
        if verdict.theta_scaling is not None else [],
        profile=TENSORRT if target == TENSORRT else None, undefined_at=dict(verdict.undefined_at),
        runs_at={f"{d.value}[{d.axis}]": value for d, value in ((symbols.classes[c], v) for c, v in verdict.pinned.items())
                 if d.kind == "shape" and ctx.is_graph_input(d.value)},
    )


def half_grid_atol(ctx: MatchContext, sampler: Sampler, precision: str) -> float | str:
    """The tolerance a rewrite of a half-precision grid declares, or the hazard that leaves none."""
    if sampler.mode == "nearest":  # a grid rounded to half picks another pixel wherever rounding crosses an edge
        return (f"nearest sampling of a grid computed in {precision} precision: the rewrite's grid is rounded "
                "differently and picks other pixels, which no tolerance bounds")
    spatial = (ctx.shape(sampler.x) or (None, None))[2:]
    if not spatial or not all(isinstance(d, int) and d > 0 for d in spatial):
        return (f"the grid is computed in {precision} precision and the image's size is not static: the rounding's "
                "effect grows with the size, so no tolerance can be declared (compute the grid in float32)")
    if sampler.padding_mode == "reflection":
        return (f"the grid is computed in {precision} precision and sampled with reflection: coordinates far outside "
                "the image, rounded at half's coarse steps there, fold back inside by whole pixels, and no tolerance "
                "bounds that (compute the grid in float32 and it fuses exactly)")
    rate = HALF_GRID_RATE.get(sampler.mode, max(HALF_GRID_RATE.values()))
    rate *= 8 if precision == "bfloat16" else 1  # 3 fewer bits
    atol = max(HALF_GRID_ATOL, rate * max(spatial))
    if atol > HALF_GRID_CEILING:
        return (f"the grid is computed in {precision} precision: at {max(spatial)} px its rounding moves samples "
                f"so far that outputs differ by up to ~{atol / 2:.2g} per unit of image range, which is no equality "
                "(compute the grid in float32, e.g. affine_grid(theta.float(), ...), and it fuses exactly)")
    return round(atol, 4)


_CONTRACT_TYPES = (TensorProto.FLOAT, TensorProto.FLOAT16)  # ops/OPS.md: X and theta, grid the same
_WIDTH = {TensorProto.DOUBLE: 3, TensorProto.FLOAT: 2, TensorProto.FLOAT16: 1, TensorProto.BFLOAT16: 1}
_HALF = ("half", "bfloat16")


def _native(ctx: MatchContext, verdict: Verdict, why: str, target: str) -> int | str:
    """Where the contract's ops cannot hold a chain's types (``why``: a float64 image, or a grid
    computed wider than the image), ONNX's own AffineGrid + GridSample can from opset 20 on: the grid
    computed in the type the original computes it in (returned), then sampled in the image's. Not
    for TensorRT (its parser takes neither op); not where ONNX leaves the grid undefined:
    align_corners=1 at a size of 1 (0 / 0: onnxruntime puts the coordinate at +1, torch at 0)."""
    if target == TENSORRT:
        return why
    if (ctx.opset("") or 0) < 20:
        return f"{why}; ONNX's own AffineGrid would take it, from opset 20 (the model has {ctx.opset('')})"
    if verdict.align_corners and not all(isinstance(d, Static) and d.n > 1 for d in verdict.spatial):
        return (f"{why}; ONNX's own AffineGrid would take it, but with align_corners=1 leaves a size of 1 undefined "
                "(onnxruntime puts its coordinate at +1, the original elsewhere)")
    if verdict.precision not in ("double", "single"):
        return f"{why}, and its grid is computed in {verdict.precision} precision"
    if verdict.theta_value is not None or verdict.theta_scaling is not None:
        # a theta fitted to constants and sizes is held to float32's roundoff (a double grid of
        # MONAI's is affine to 5.5e-8 only): ONNX's AffineGrid would compute another grid
        return (f"{why}; ONNX's own AffineGrid would take it, but this grid is not computed from a theta: its "
                "constants fit an affine grid to float32's roundoff only, not to the double it is computed in")
    return TensorProto.DOUBLE if verdict.precision == "double" else TensorProto.FLOAT


def _narrowing(verdict: Verdict, theta_elem, elem) -> str | None:
    """The contract types theta as the image (the grid as theta): a theta the original reads (or
    a grid it computes) at a wider type than the image's would be rounded by the rewrite. From
    float32 to half that moves every sample by up to ~1e-3 of the image; from float64 to float32
    a theta whose terms cancel (large translations against large coefficients) loses what the
    original kept. Neither can be proved equal."""
    if verdict.precision in _HALF or theta_elem is None:
        return None
    if _WIDTH.get(theta_elem, 2) > _WIDTH.get(elem, 2):
        return (f"theta is {TensorProto.DataType.Name(theta_elem).lower()} but the image is "
                f"{TensorProto.DataType.Name(elem).lower()}: the op's theta has the image's type, and the rewrite "
                "would round theta before computing the grid")
    return None


def _read_columns(verdict: Verdict, layout) -> list[int] | None | str:
    """For a mapped theta: the elements the original reads (the rewrite reads no other, so an
    inf or NaN where the original never looks stays out of it); None when it reads them all."""
    if verdict.theta_map is None or layout is None:
        return None
    p = layout.rows * layout.cols
    read = [i for i in range(p) if verdict.reads >> i & 1]
    unread = [i for i in range(p) if not verdict.reads >> i & 1]
    if unread and np.any(verdict.theta_map.weight[unread] != 0):
        return "the map fitted to the grid uses theta elements the proof says the grid never reads"
    return read if unread else None


def _broadcast(verdict: Verdict, batch: Piece) -> Piece | None | str:  # batch: the image's
    """The batch piece theta is expanded to, None, or why theta's batch does not fit."""
    if verdict.theta_value is not None:
        n = verdict.theta_value.shape[0]
        if n == 1:
            return None if batch == Fixed(1) else batch
        return None if verdict.batch == Static(n) else "the fitted theta differs per item of a dynamic batch"
    if verdict.variable_batch == verdict.batch and not verdict.broadcast_variable:
        return None
    if verdict.variable_batch == Static(1) or verdict.broadcast_variable:
        return batch
    return "theta's batch neither matches the grid's nor broadcasts from 1"
