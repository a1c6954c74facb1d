"""Rules for ops that move, select or make elements without arithmetic: each category follows
its element. Indices, shapes and pads must not depend on the variables; where they depend on
the dims, an element may come from anywhere along the axes they select (``spread``)."""

from __future__ import annotations

import numpy as np

from ..graph.node import shape_range
from .arith import finish
from .bounds import branch
from .elements import AFFINE, BRANCHED, DIMS, KNOWN, OTHER, Abstract, NotProved, branch_of, dims, known, mark_branch, move
from .elements import spread as _spread_all


def _argument(node, ins, index: int, what: str, selects: bool = False) -> bool:
    """True when argument ``index`` is a constant; False when it follows the dims. ``selects``:
    the argument picks elements (indices, slice bounds) rather than sizing a result: a run-time
    integer input may size things, never pick which elements the result holds."""
    if index >= len(ins) or ins[index] is None:
        return True
    arg = ins[index]
    top = arg.top()
    if top >= AFFINE:
        raise NotProved(f"{node.label}: its {what} depends on the variables")
    if selects and arg.data and top != KNOWN:
        raise NotProved(f"{node.label}: its {what} come from the run-time integer input {arg.data!r}, which may only "
                        "set sizes, not pick elements")
    return top == KNOWN


def spread(a: Abstract, shape, args=()) -> Abstract:
    """Indices that follow the dims: any element may land anywhere; from a branch on sizes, the
    elements chosen are that branch's outcome."""
    return _spread_all(a, shape, branch_of(args))


def reshape(node, ins, vals, outs):
    """Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: order kept, shape from the output."""
    shape = np.shape(outs[0])
    result = move(ins[0], lambda x: np.reshape(x, shape))
    extra = [finish(known(np.asarray(o)), o) for o in outs[1:]]  # Dropout's mask
    return [finish(result, outs[0])] + extra


def transpose(node, ins, vals, outs):
    perm = node.attr("perm")
    return [finish(move(ins[0], lambda x: np.transpose(x, perm)), outs[0])]


def expand(node, ins, vals, outs):
    _argument(node, ins, 1, "shape")
    shape = np.shape(outs[0])
    return [finish(move(ins[0], lambda x: np.broadcast_to(x, shape).copy()), outs[0])]


def tile(node, ins, vals, outs):
    _argument(node, ins, 1, "repeats")
    repeats = [int(r) for r in np.asarray(vals[1]).reshape(-1)]
    return [finish(move(ins[0], lambda x: np.tile(x, repeats)), outs[0])]


def constant_of_shape(node, ins, vals, outs):
    _argument(node, ins, 0, "shape")
    return [finish(known(np.asarray(outs[0])), outs[0])]


def range_(node, ins, vals, outs):
    for i, what in enumerate(("start", "limit", "delta")):
        _argument(node, ins, i, what)
    if all(p.top() == KNOWN for p in ins[:3]):
        return [finish(known(np.asarray(outs[0])), outs[0])]
    start, limit = ins[0], ins[1]
    lo = np.minimum(start.lo.min(initial=np.inf), limit.lo.min(initial=np.inf))
    hi = np.maximum(start.hi.max(initial=-np.inf), limit.hi.max(initial=-np.inf))
    result = dims(np.shape(outs[0]), lo, hi, start.data or limit.data)
    source = branch_of(ins[:3])
    if source:  # its length came out of a branch on sizes
        result.axes, result.branch = (BRANCHED,), source
    return [finish(result, outs[0])]


def shape_of(node, ins, vals, outs):
    """Shape/Size of a value the region computes: its dims follow the input's, and an axis whose
    length is an input dim gives that dim."""
    a = ins[0]
    if node.op_type == "Size" or a.axes is None:
        return [finish(dims(np.shape(outs[0]), 0, np.inf, a.data), outs[0])]
    start, end = shape_range(node, len(a.axes))
    syms = list(a.axes[start:end])
    return [finish(dims(np.shape(outs[0]), 0, np.inf, a.data, sym=syms), outs[0])]


def concat(node, ins, vals, outs):
    parts = [p for p in ins if p is not None]
    axis = int(node.attr("axis", 0)) % max(len(parts[0].shape), 1)
    result = Abstract(*(np.concatenate([getattr(p, f) for p in parts], axis=axis) for f in ("kind", "reads", "lo", "hi")))
    result.why = next((p.why for p in parts if p.why), None)
    result.data = next((p.data for p in parts if p.data), None)
    if any(p.sym is not None for p in parts):
        result.sym = np.concatenate([p.syms() for p in parts], axis=axis)
    result.branch = branch_of(parts)
    return [finish(result, outs[0])]


def split(node, ins, vals, outs):
    a = ins[0]
    axis = int(node.attr("axis", 0)) % max(len(a.shape), 1)
    edges = np.cumsum([np.shape(o)[axis] for o in outs])[:-1]
    pieces = [np.split(getattr(a, f), edges, axis=axis) for f in ("kind", "reads", "lo", "hi")]
    syms = np.split(a.syms(), edges, axis=axis)
    return [finish(Abstract(*(p[i] for p in pieces), a.why, a.data, syms[i], branch=a.branch), o)
            for i, o in enumerate(outs)]


def _onnx_slice(dim: int, start: int, end: int, step: int) -> np.ndarray:
    """The indices ONNX's Slice takes along one axis (clamping as the spec says)."""
    if step == 0:
        raise NotProved("Slice with step 0")
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, -1), dim - 1), min(max(end, -1), dim - 1)
    return np.arange(start, end, step, dtype=np.int64)


def slice_(node, ins, vals, outs):
    a = ins[0]
    rank = len(a.shape)
    if len(ins) > 1:
        if not all(_argument(node, ins, i, w, selects=True)
                   for i, w in ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps"))):
            return [finish(spread(a, np.shape(outs[0]), ins[1:]), outs[0])]
        starts = np.asarray(vals[1]).reshape(-1)
        ends = np.asarray(vals[2]).reshape(-1)
        axes = np.asarray(vals[3]).reshape(-1) if len(vals) > 3 and vals[3] is not None else np.arange(len(starts))
        steps = np.asarray(vals[4]).reshape(-1) if len(vals) > 4 and vals[4] is not None else np.ones(len(starts))
    else:  # opset < 10: attributes
        starts, ends = np.array(node.attr("starts")), np.array(node.attr("ends"))
        axes = np.array(node.attr("axes", list(range(len(starts)))))
        steps = np.ones(len(starts))
    result = a
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax = int(ax) % rank
        idx = _onnx_slice(a.shape[ax], int(s), int(e), int(st))
        result = move(result, lambda x, idx=idx, ax=ax: np.take(x, idx, axis=ax))
        if _follows_dims(a, ax) and not _whole(int(s), int(e), int(st)):
            # fixed bounds on an axis as long as an input dim: Slice(0, 100) is the whole axis at
            # every probe below 100, and past it cuts (its bounds are clamped at the probe's length)
            result.resized = result.resized or (f"{node.label} cuts an axis as long as an input dim at fixed "
                                                "bounds: past the sizes a probe tries it cuts elsewhere")
    return [finish(result, outs[0])]


def _follows_dims(a: Abstract, axis: int) -> bool:
    return a.axes is not None and axis < len(a.axes) and a.axes[axis] not in (-1, None)


def _whole(start: int, end: int, step: int) -> bool:
    """Bounds that take a whole axis of any length (ONNX clamps them)."""
    big = 2 ** 31 - 1
    return (start == 0 and end >= big) if step > 0 else (start >= big and end <= -big)


def _gather_along(node, ins, vals, outs, take):
    """Gather and GatherElements: constant indices move each element; indices that follow the
    dims may bring any element."""
    a = ins[0]
    axis = int(node.attr("axis", 0)) % max(len(a.shape), 1)
    if not _argument(node, ins, 1, "indices", selects=True):
        if take is np.take and a.shape:
            return [finish(_picked_along(node, a, axis, np.shape(outs[0]), ins[1:]), outs[0])]
        return [finish(spread(a, np.shape(outs[0]), ins[1:]), outs[0])]
    idx = np.asarray(vals[1]).astype(np.int64)
    idx = np.where(idx < 0, idx + a.shape[axis], idx)
    return [finish(move(a, lambda x: take(x, idx, axis=axis)), outs[0])]


def _picked_along(node, a: Abstract, axis: int, shape, indices) -> Abstract:
    """Gather at indices that follow the dims: an output element may be any element along
    ``axis`` (and only along it), so it reads what they read together. Along an axis as long as
    an input dim (items) that is exact at every size; along a fixed one (a matrix's rows), which
    elements are read changes with the sizes, and values of the variables are not affine there."""
    kind = np.max(a.kind, axis=axis, keepdims=True)
    reads = np.bitwise_or.reduce(a.reads, axis=axis, keepdims=True)
    lo, hi = np.min(a.lo, axis=axis, keepdims=True), np.max(a.hi, axis=axis, keepdims=True)
    kind = np.where((kind == KNOWN) & (lo != hi), DIMS, kind)  # differing constants picked by the dims
    k = len(shape) - (len(a.shape) - 1)  # the indices' rank
    def place(x):
        x = np.squeeze(x, axis=axis)
        x = np.expand_dims(x, tuple(range(axis, axis + k))) if k else x
        return np.broadcast_to(x, shape).copy()
    result = Abstract(place(kind).astype(np.int8), place(reads).astype(np.uint32), place(lo), place(hi), a.why,
                      a.data, branch=a.branch, varies=a.varies)
    if not _follows_dims(a, axis) and (result.kind >= AFFINE).any():
        result.kind = np.where(result.kind >= AFFINE, OTHER, result.kind).astype(np.int8)
        result.why = result.why or (f"{node.label} picks values that depend on the variables at places that "
                                    "follow the input dims: which elements it reads changes with the sizes")
    return mark_branch(result, np.full(shape, bool(branch_of(indices))), branch_of(indices))


def gather(node, ins, vals, outs):
    return _gather_along(node, ins, vals, outs, np.take)


def gather_elements(node, ins, vals, outs):
    return _gather_along(node, ins, vals, outs, np.take_along_axis)


def gather_nd(node, ins, vals, outs):
    a = ins[0]
    if not _argument(node, ins, 1, "indices", selects=True) or node.attr("batch_dims", 0):
        return [finish(spread(a, np.shape(outs[0]), ins[1:]), outs[0])]
    idx = np.asarray(vals[1]).astype(np.int64)
    depth = idx.shape[-1]
    idx = np.where(idx < 0, idx + np.array(a.shape[:depth]), idx)
    return [finish(move(a, lambda x: x[tuple(idx[..., i] for i in range(depth))]), outs[0])]


_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _scatter(node, data: Abstract, updates: Abstract, where) -> Abstract:
    """``data`` with ``updates`` written at ``where`` (an index tuple into data, one entry per
    update element), as the op's ``reduction`` says. An element updated several times (a repeated
    index) merges every update, not the last one; ``mul`` keeps it affine only while one factor
    depends on the variables, ``max``/``min`` are a clamp of them and a branch on sizes."""
    reduction = node.attr("reduction", "none")
    result = move(data, np.copy)
    if reduction == "none":
        for field in ("kind", "reads", "lo", "hi"):
            getattr(result, field)[where] = getattr(updates, field)
        flags = np.asarray(data.syms() == BRANCHED).copy()  # overwritten elements are no longer the dims they were
        flags[where] = updates.syms() == BRANCHED
        result.sym = np.where(flags, BRANCHED, -1).astype(np.int32)
        return result
    np.maximum.at(result.kind, where, updates.kind)
    np.bitwise_or.at(result.reads, where, updates.reads)
    touched = np.zeros(data.shape, bool)
    touched[where] = True
    result.lo, result.hi = np.where(touched, -np.inf, result.lo), np.where(touched, np.inf, result.hi)
    flags = np.asarray(data.syms() == BRANCHED).copy()
    np.logical_or.at(flags, where, updates.syms() == BRANCHED)
    if reduction == "mul":  # a product of two values that depend on the variables is not affine
        factors = (data.kind >= AFFINE).astype(np.int64)
        np.add.at(factors, where, (updates.kind >= AFFINE).astype(np.int64))
        result.kind = np.where(factors > 1, OTHER, result.kind).astype(np.int8)
        why = "multiplies values that depend on the variables"
    elif reduction in ("max", "min"):
        result.kind = np.where(touched & (result.kind >= AFFINE), OTHER, result.kind).astype(np.int8)
        why = "clamps values that depend on the variables"
    else:
        why = None
    if why and (result.kind == OTHER).any():
        result.why = result.why or updates.why or f"{node.label} ({reduction}) {why}"
    result.sym = np.where(flags, BRANCHED, -1).astype(np.int32)
    if reduction in ("max", "min"):  # an extreme of sizes is decided at the probe's dims only
        result = mark_branch(result, touched & (result.kind == DIMS),
                             branch(node.label, f"takes the {reduction} of", [data, updates]))
    return result


def _scattered_anywhere(node, data: Abstract, updates: Abstract, shape, indices) -> Abstract:
    """Indices that follow the dims: any update may land on any element, as the reduction says
    (an unknown reduction, max or min, or mul of updates that may repeat: not affine)."""
    result = spread(_union(data, updates), shape, indices)
    reduction = node.attr("reduction", "none")
    bends = reduction not in ("none", "add") and (updates.top() >= AFFINE or
                                                  (reduction != "mul" and data.top() >= AFFINE))
    if bends and (result.kind >= AFFINE).any():
        result.kind = np.where(result.kind >= AFFINE, OTHER, result.kind).astype(np.int8)
        result.why = result.why or f"{node.label} ({reduction}) combines values that depend on the variables " \
                                   "otherwise than by adding them"
    return result


def scatter_nd(node, ins, vals, outs):
    data, updates = ins[0], ins[2]
    if node.attr("reduction", "none") not in _REDUCTIONS or not _argument(node, ins, 1, "indices", selects=True):
        return [finish(_scattered_anywhere(node, data, updates, np.shape(outs[0]), ins[1:2]), outs[0])]
    idx = np.asarray(vals[1]).astype(np.int64)
    depth = idx.shape[-1]
    idx = np.where(idx < 0, idx + np.array(data.shape[:depth]), idx)
    where = tuple(idx[..., i] for i in range(depth))
    return [finish(_meta_of(_scatter(node, data, updates, where), [data, updates]), outs[0])]


def scatter_elements(node, ins, vals, outs):
    data, updates = ins[0], ins[2]
    if node.attr("reduction", "none") not in _REDUCTIONS or not _argument(node, ins, 1, "indices", selects=True):
        return [finish(_scattered_anywhere(node, data, updates, np.shape(outs[0]), ins[1:2]), outs[0])]
    axis = int(node.attr("axis", 0)) % max(len(data.shape), 1)
    idx = np.asarray(vals[1]).astype(np.int64)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    where = tuple(idx if d == axis else np.broadcast_to(np.arange(n).reshape([-1 if i == d else 1 for i in
                                                                           range(idx.ndim)]), idx.shape)
                  for d, n in enumerate(idx.shape))
    return [finish(_meta_of(_scatter(node, data, updates, where), [data, updates]), outs[0])]


def pad(node, ins, vals, outs):
    a = ins[0]
    mode = node.attr("mode", "constant")
    if len(ins) > 1:
        if not _argument(node, ins, 1, "pads") or not _argument(node, ins, 3, "axes"):
            # where the fill ends and the data starts follows the dims: the fill is one of the values
            fill = ins[2] if len(ins) > 2 and ins[2] is not None else known(np.zeros(()))
            if fill.top() >= AFFINE:
                raise NotProved(f"{node.label}: its pad value depends on the variables")
            return [finish(spread(_flat_union(a, fill), np.shape(outs[0]), ins[1:]), outs[0])]
        pads = [int(p) for p in np.asarray(vals[1]).reshape(-1)]
        axes = [int(x) % len(a.shape) for x in np.asarray(vals[3]).reshape(-1)] if len(vals) > 3 and \
            vals[3] is not None else list(range(len(a.shape)))
    else:
        pads, axes = list(node.attr("pads")), list(range(len(a.shape)))
    if len(ins) > 2 and ins[2] is not None and ins[2].top() >= AFFINE:
        raise NotProved(f"{node.label}: its pad value depends on the variables")
    n = len(axes)
    widths = [(0, 0)] * len(a.shape)
    for i, ax in enumerate(axes):
        widths[ax] = (pads[i], pads[i + n])
    crop = [slice(max(-b, 0), a.shape[ax] - max(-e, 0) if e < 0 else None) for ax, (b, e) in enumerate(widths)]
    widths = [(max(b, 0), max(e, 0)) for b, e in widths]
    np_mode = {"constant": "constant", "edge": "edge", "reflect": "reflect", "wrap": "wrap"}.get(mode)
    if np_mode is None:
        raise NotProved(f"{node.label}: Pad mode {mode!r} has no rule here")
    value = np.asarray(outs[0])

    def padded(x, fill):
        x = x[tuple(crop)]
        return np.pad(x, widths, mode=np_mode, constant_values=fill) if np_mode == "constant" else np.pad(x, widths,
                                                                                                           mode=np_mode)
    result = Abstract(padded(a.kind, KNOWN), padded(a.reads, 0), padded(a.lo, 0.0), padded(a.hi, 0.0), a.why, a.data,
                      None if a.sym is None else padded(a.sym, -1), branch=a.branch)
    return [finish(result, value)]


def _union(a: Abstract, b: Abstract) -> Abstract:
    return Abstract(np.array(max(a.top(), b.top()), np.int8), np.array(a.all_reads() | b.all_reads(), np.uint32),
                    np.array(-np.inf), np.array(np.inf), a.why or b.why, a.data or b.data)


def _flat_union(a: Abstract, b: Abstract) -> Abstract:
    """The elements of both, as one flat value (what ``spread`` picks from)."""
    parts = [a, b]
    cat = {f: np.concatenate([np.asarray(getattr(p, f)).reshape(-1) for p in parts])
           for f in ("kind", "reads", "lo", "hi")}
    return Abstract(cat["kind"], cat["reads"], cat["lo"], cat["hi"], a.why or b.why, a.data or b.data,
                    branch=a.branch or b.branch, varies=a.varies or b.varies)


def _meta_of(result: Abstract, parts) -> Abstract:
    result.why = result.why or next((p.why for p in parts if p.why), None)
    result.data = next((p.data for p in parts if p.data), None)
    return result
