"""GridSample from opset 20 on, written for opsets 16-19: a 4-D sampler keeps its op with the
older mode names; any other rank (a volume, or 1-D) becomes gathers (``sample_by_gathers``),
since GridSample-16 takes 4-D input only.

``sample_by_gathers`` is GridSample-20's definition (and torch's grid_sample) in ops every opset
from 16 has: unnormalise each coordinate, apply the padding to it (border: clamp; reflection:
fold), then nearest (round half to even) or linear taps, each read with GatherND where it lies
inside the input and 0 where it does not. It writes through any emitter with ``op`` and
``const`` (a lowering's NodeBuilder, a rewrite's or a function body's emitter).
"""

from __future__ import annotations

import itertools

import numpy as np
from onnx import TensorProto

from .site import Site

_OLD_NAMES = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest",
              "bilinear": "bilinear", "bicubic": "bicubic"}


def grid_sample(site: Site) -> str | None:
    node = site.node
    mode, padding = site.attr("mode", "linear"), site.attr("padding_mode", "zeros")
    align = int(site.attr("align_corners", 0))
    if mode not in _OLD_NAMES:
        return f"unknown mode {mode!r}"
    rank = site.rank(node.input[0]) or site.rank(node.input[1])
    if rank is None:
        return "the rank of its input is unknown (GridSample before opset 20 takes 4-D input only)"
    if rank == 4:
        site.build.copy(node, drop=("mode",))
        site.build.nodes[-1].attribute.add(name="mode", s=_OLD_NAMES[mode].encode(), type=3)  # STRING
        return None
    if _OLD_NAMES[mode] == "bicubic":
        return f"cubic sampling of a rank-{rank} input (opset 20 has it for 4-D only)"
    if padding not in ("zeros", "border", "reflection"):
        return f"unknown padding_mode {padding!r}"
    sample_by_gathers(site.build, node.input[0], node.input[1], rank - 2, _OLD_NAMES[mode], padding, align,
                      double=site.elem_of(node.input[1]) == TensorProto.DOUBLE, out=node.output[0])
    return None


def _unnormalise(em, g: str, size: str, align: int, one: str, two: str) -> str:
    """Grid coordinate in [-1, 1] -> pixel index units (float)."""
    shifted = em.op("Add", [g, one])
    if align:
        return em.op("Mul", [em.op("Div", [shifted, two]), em.op("Sub", [size, one])])
    return em.op("Div", [em.op("Sub", [em.op("Mul", [shifted, size]), one]), two])


def _reflect(em, c: str, size: str, align: int, num: dict) -> str:
    """torch's reflect_coordinates, then the clip: fold ``c`` over [0, size - 1] (pixel centres,
    align_corners) or [-0.5, size - 0.5] (pixel edges), then clamp to [0, size - 1]."""
    last = em.op("Sub", [size, num["one"]])
    low = num["zero"] if align else em.op("Neg", [num["half"]])
    span = last if align else size
    safe = em.op("Max", [span, num["tiny"]])  # span 0 (one pixel, align_corners) is answered below
    dist = em.op("Abs", [em.op("Sub", [c, low])])
    extra = em.op("Mod", [dist, safe], fmod=1)
    flips = em.op("Floor", [em.op("Div", [dist, safe])])
    even = em.op("Equal", [em.op("Mod", [flips, num["two"]], fmod=1), num["zero"]])
    folded = em.op("Where", [even, em.op("Add", [extra, low]),
                             em.op("Add", [em.op("Sub", [span, extra]), low])])
    folded = em.op("Where", [em.op("Greater", [span, num["zero"]]), folded, num["zero"]])
    return em.op("Clip", [folded, num["zero"], last])


def sample_by_gathers(em, x: str, grid: str, k: int, mode: str, padding: str, align: int, *,
                      double: bool = False, out: str | None = None) -> str:
    """GridSample of ``x`` ``[N, C, *spatial]`` at ``grid`` ``[N, *out_spatial, k]`` (x first)
    for ``k`` spatial dims; ``mode`` bilinear or nearest, ``padding`` zeros, border or
    reflection. Coordinates are computed in float32 (float64 for a ``double`` grid)."""
    ftype, ntype = (TensorProto.DOUBLE, np.float64) if double else (TensorProto.FLOAT, np.float32)
    num = {name: em.const(v, ntype) for name, v in (("one", 1.0), ("two", 2.0), ("zero", 0.0), ("half", 0.5),
                                                    ("tiny", 1e-30))}
    one, two, zero = num["one"], num["two"], num["zero"]
    g = em.op("Cast", [grid], to=ftype)
    shape = em.op("Shape", [x])
    batch_channels = em.op("Slice", [shape, em.const([0]), em.const([2])])
    out_spatial = em.op("Slice", [em.op("Shape", [grid]), em.const([1]), em.const([1 + k])])
    taps_per_axis, sizes = [], []
    for j in range(k):  # spatial axis j (D, H, W order); the grid's last axis holds W first
        size_int = em.op("Gather", [shape, em.const(2 + j)], axis=0)
        sizes.append(size_int)
        size = em.op("Cast", [size_int], to=ftype)
        c = _unnormalise(em, em.op("Gather", [g, em.const(k - 1 - j)], axis=-1), size, align, one, two)
        if padding == "border":
            c = em.op("Clip", [c, zero, em.op("Sub", [size, one])])
        elif padding == "reflection":
            c = _reflect(em, c, size, align, num)
        if mode == "nearest":
            taps = [(em.op("Round", [c]), None)]
        else:
            low = em.op("Floor", [c])
            high_w = em.op("Sub", [c, low])
            taps = [(low, em.op("Sub", [one, high_w])), (em.op("Add", [low, one]), high_w)]
        axis_taps = []
        for at, weight in taps:
            inside = em.op("And", [em.op("GreaterOrEqual", [at, zero]),
                                   em.op("LessOrEqual", [at, em.op("Sub", [size, one])])])
            index = em.op("Cast", [em.op("Where", [inside, at, zero])], to=TensorProto.INT64)
            axis_taps.append((index, weight, inside))
        taps_per_axis.append(axis_taps)
    # x as [N, positions, C], each tap's flat index as [N, out positions, 1]: GatherND per batch item
    flat_x = em.op("Transpose", [em.op("Reshape", [x, em.op("Concat", [batch_channels, em.const([-1])], axis=0)])],
                   perm=[0, 2, 1])
    n = em.op("Slice", [shape, em.const([0]), em.const([1])])
    index_shape = em.op("Concat", [n, em.const([-1, 1])], axis=0)
    total = None
    for combo in itertools.product(*taps_per_axis):
        flat, weight, inside = None, None, None
        for j, (index, w, ok) in enumerate(combo):
            flat = index if flat is None else em.op("Add", [em.op("Mul", [flat, sizes[j]]), index])
            weight = w if weight is None else (weight if w is None else em.op("Mul", [weight, w]))
            inside = ok if inside is None else em.op("And", [inside, ok])
        picked = em.op("GatherND", [flat_x, em.op("Reshape", [flat, index_shape])], batch_dims=1)  # [N, P, C]
        picked = em.op("CastLike", [picked, zero])
        keep = em.op("Unsqueeze", [em.op("Reshape", [inside, em.op("Concat", [n, em.const([-1])], axis=0)]),
                                   em.const([2])])
        if weight is not None:
            w = em.op("Unsqueeze", [em.op("Reshape", [weight, em.op("Concat", [n, em.const([-1])], axis=0)]),
                                    em.const([2])])
            picked = em.op("Mul", [picked, w])
        term = em.op("Where", [keep, picked, zero])
        total = term if total is None else em.op("Add", [total, term])
    result = em.op("Transpose", [total], perm=[0, 2, 1])  # [N, C, P]
    result = em.op("Reshape", [result, em.op("Concat", [batch_channels, out_spatial], axis=0)])
    return em.op("CastLike", [result, x], out=out)
