"""Which input dim each axis of a value has, when it has one exactly.

Relations between sizes are what settle many branches exporters write: kornia takes
``Max(x.shape[0], M.shape[0])`` where ``M`` was expanded to x's batch, and TorchScript compares
sizes it has just read. A value's axes carry the symbol (a class of equal input dims) their
length is, followed through reshapes, broadcasts and products; ``Shape`` of the value then yields
elements that are those symbols, and ``Max`` of two equal symbols is settled.
"""

from __future__ import annotations

import numpy as np

from .elements import Abstract

NONE = -1
_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "Where", "Equal", "Less", "Greater", "LessOrEqual",
              "GreaterOrEqual", "Min", "Max", "And", "Or", "Xor", "Mod", "Sum", "Mean", "Clip", "PRelu",
              "BitShift"}


def _of(a: Abstract | None) -> tuple | None:
    if a is None:
        return None
    return a.axes if a.axes is not None else (NONE,) * a.kind.ndim


def _broadcast(parts: list[tuple[tuple, tuple]], out_shape: tuple) -> tuple:
    """Right-aligned: an output axis takes the symbol of an input axis of the same length."""
    out = [NONE] * len(out_shape)
    for axes, shape in parts:
        offset = len(out_shape) - len(shape)
        for i, (sym, n) in enumerate(zip(axes, shape)):
            if sym != NONE and n == out_shape[offset + i] and out[offset + i] == NONE:
                out[offset + i] = sym
    return tuple(out)


def _ints(value) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def propagate(node, ins: list, vals: list, outs: list) -> list[tuple]:
    op = node.op_type
    shapes = [np.shape(o) for o in outs]
    first, out_shape = _of(ins[0]) if ins else None, shapes[0] if shapes else ()
    unknown = [(NONE,) * len(s) for s in shapes]
    try:
        if op in _BROADCAST:
            parts = [(_of(p), np.shape(v)) for p, v in zip(ins, vals) if p is not None]
            return [_broadcast(parts, out_shape)]
        if op in ("Identity", "Cast", "CastLike", "Neg", "Abs", "Relu", "Sign", "Floor", "Ceil", "Round", "Sqrt",
                  "Exp", "Log", "Reciprocal", "Not", "IsNaN", "IsInf", "Dropout", "CumSum") and first is not None:
            return [first] + unknown[1:]
        if op == "Transpose":
            perm = node.attr("perm") or list(reversed(range(len(first))))
            return [tuple(first[p] for p in perm)]
        if op == "Unsqueeze":
            axes = node.attr("axes") or _ints(vals[1])
            out = list(first)
            for ax in sorted(a % len(out_shape) for a in axes):
                out.insert(ax, NONE)
            return [tuple(out)]
        if op == "Squeeze":
            axes = node.attr("axes") or (_ints(vals[1]) if len(vals) > 1 and vals[1] is not None else None)
            rank = len(first)
            gone = {a % rank for a in axes} if axes else {i for i, n in enumerate(np.shape(vals[0])) if n == 1}
            return [tuple(s for i, s in enumerate(first) if i not in gone)]
        if op == "Reshape":
            target = _ints(vals[1])
            element = ins[1].syms().reshape(-1) if ins[1] is not None else np.full(len(target), NONE)
            out = []
            for i, t in enumerate(target):
                out.append(first[i] if t == 0 and i < len(first) else int(element[i]) if t > 0 else NONE)
            return [tuple(out)]
        if op == "Expand":
            element = ins[1].syms().reshape(-1)
            target = _ints(vals[1])
            offset = len(out_shape) - len(target)
            out = list(_broadcast([(first, np.shape(vals[0]))], out_shape))
            for i, (t, sym) in enumerate(zip(target, element)):
                if sym != NONE and t == out_shape[offset + i] and t != 1:
                    out[offset + i] = int(sym)
            return [tuple(out)]
        if op == "ConstantOfShape":
            return [tuple(int(s) for s in ins[0].syms().reshape(-1))]
        if op == "Range" and _ints(vals[0]) == [0] and _ints(vals[2]) == [1] and ins[1].sym is not None:
            return [(int(ins[1].syms().reshape(-1)[0]),)]
        if op == "Gather":
            axis = int(node.attr("axis", 0)) % len(first)
            return [first[:axis] + (NONE,) * np.ndim(vals[1]) + first[axis + 1:]]
        if op in ("Slice", "Tile", "Pad", "GatherElements", "Concat", "Split"):
            return _keep_unchanged(node, ins, vals, shapes, first)
        if op in ("MatMul",):
            a, b = _of(ins[0]), _of(ins[1])
            sa, sb = np.shape(vals[0]), np.shape(vals[1])
            if len(sa) >= 2 and len(sb) >= 2:
                batch = _broadcast([(a[:-2], sa[:-2]), (b[:-2], sb[:-2])], out_shape[:-2])
                return [batch + (a[-2], b[-1])]
        if op.startswith("Reduce"):
            return _keep_unchanged(node, ins, vals, shapes, first)
    except (IndexError, TypeError, ValueError):
        return unknown
    return unknown


def _keep_unchanged(node, ins, vals, shapes, first) -> list[tuple]:
    """Ops that change some axes' lengths and keep the rest: an axis keeps its symbol where the
    output has the input's rank and the same length on it (Gather/Concat/Slice along one axis)."""
    if first is None:
        return [(NONE,) * len(s) for s in shapes]
    in_shape = np.shape(vals[0])
    out = []
    for s in shapes:
        if len(s) != len(in_shape):
            out.append((NONE,) * len(s))
            continue
        axis = node.attr("axis")
        out.append(tuple(sym if n == m and (axis is None or i != axis % max(len(s), 1)) else NONE
                         for i, (sym, n, m) in enumerate(zip(first, in_shape, s))))
    return out
