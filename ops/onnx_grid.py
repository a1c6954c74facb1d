"""The contract's math in standard ONNX ops, written through an emitter (``emit``): the affine
grid (opset 20's ``AffineGrid``, or built from MatMul and friends before it) and the sampler.

Semantics are torch's: with ``align_corners=1`` a size-1 output dim has its coordinate at 0 in
torch and at -1 in ONNX's AffineGrid (FACTS.md). The decomposition computes torch's coordinates
itself, so a static size with such a dim takes it at opset 20 too (fuse reads it back as it
was); a run-time size keeps AffineGrid, with theta's column zeroed where the dim is 1.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from onnx import TensorProto

from surgeon import sample_by_gathers

from .grid_math import base_grid

MODES = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest", "bicubic": "bicubic", "cubic": "bicubic"}
PADDINGS = ("zeros", "border", "reflection")
_OPSET20_NAMES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


def onnx_mode(mode: str, opset: int) -> str:
    """A contract mode (either spelling) as the standard GridSample of ``opset`` names it."""
    mode = MODES[mode]
    return _OPSET20_NAMES[mode] if opset >= 20 else mode


def unexpressible(opset: int, k: int | None, sampler: bool, gathers: bool = False) -> str | None:
    """Why opset ``opset`` cannot express the op for ``k`` spatial dims, or None. ``gathers``:
    a 3-D sampler below opset 20 may be written with gathers (static mode and padding only)."""
    if opset < 16:
        return "needs opset 16 or higher (where GridSample starts)"
    if sampler and k == 3 and opset < 20 and not gathers:
        return "3-D sampling needs opset 20 (GridSample is 4-D only before it)"
    return None


def in_float32(em, value: str) -> str:
    """``value`` as float32: the grid and the sampling are computed there whatever the contract
    type (onnxruntime has no float16 AffineGrid, and a half grid is coarse past 1k pixels)."""
    return em.op("Cast", [value], to=TensorProto.FLOAT)


class Size:
    """The output size: static spatial dims when known, and the int64 ``[N, C, *spatial]``
    tensor, built on first use (the decomposition of a static size never needs it)."""

    def __init__(self, spatial: list[int] | None, build: Callable[[], str]):
        self.spatial = list(spatial) if spatial is not None else None
        self._build = build
        self._tensor: str | None = None

    def tensor(self) -> str:
        if self._tensor is None:
            self._tensor = self._build()
        return self._tensor


def affine_grid(em, theta: str, size: Size, k: int, align: int, opset: int, out: str | None = None) -> str:
    """``grid = F.affine_grid(theta, size, align_corners)``: ``[N, *spatial, k]``."""
    static_size_one = size.spatial is not None and 1 in size.spatial
    if opset >= 20 and not (align and static_size_one):
        if align and size.spatial is None:
            theta = _torch_size_one(em, theta, size.tensor())
        return em.op("AffineGrid", [theta, size.tensor()], out=out, align_corners=align)
    if size.spatial is not None:
        base = em.const(base_grid(size.spatial, align), np.float32)
    else:
        base = _base_at_run_time(em, size.tensor(), k, align)
    base = em.op("CastLike", [base, theta])  # [*spatial, k+1]
    # [N, k, k+1] -> [N, 1.., k+1, k]: MatMul broadcasts the base over N, theta over the
    # leading spatial dims, giving [N, *spatial, k].
    rows = em.op("Transpose", [theta], perm=[0, 2, 1])
    rows = em.op("Unsqueeze", [rows, em.const(list(range(1, k)))])
    return em.op("MatMul", [base, rows], out=out)


def grid_sample(em, x: str, grid: str, mode, padding, align: int, opset: int, out: str | None = None,
                k: int = 2) -> str:
    """A standard GridSample; ``mode`` is a contract name (or a function attribute reference).
    A 3-D sampler below opset 20 (GridSample is 4-D only there) is written with gathers."""
    if k != 2 and opset < 20:
        return sample_by_gathers(em, x, grid, k, MODES[mode], padding, align, out=out)
    name = onnx_mode(mode, opset) if isinstance(mode, str) else mode
    return em.op("GridSample", [x, grid], out=out, mode=name, padding_mode=padding, align_corners=align)


def _coords(em, n: str, align: int) -> str:
    """torch's coordinates along a dim of run-time size ``n`` (int64 scalar), as float:
    ``(2i - (n-1)) / d`` with ``d = n`` (align 0) or ``max(n-1, 1)`` (align 1; 0 when n == 1)."""
    one, two = em.const(1.0, np.float32), em.const(2.0, np.float32)
    count = em.op("Cast", [n], to=TensorProto.FLOAT)
    index = em.op("Cast", [em.op("Range", [em.const(0), n, em.const(1)])], to=TensorProto.FLOAT)
    numerator = em.op("Sub", [em.op("Mul", [index, two]), em.op("Sub", [count, one])])
    denominator = em.op("Max", [em.op("Sub", [count, one]), one]) if align else count
    return em.op("Div", [numerator, denominator])


def _base_at_run_time(em, size: str, k: int, align: int) -> str:
    """The base grid for a size known only at run time (float32, ``[*spatial, k+1]``)."""
    shape = em.op("Concat", [em.op("Slice", [size, em.const([2]), em.const([k + 2])]), em.const([1])], axis=0)
    columns = []
    for j in reversed(range(k)):  # theta's column order: W first
        line = _coords(em, em.op("Gather", [size, em.const(2 + j)], axis=0), align)
        placed = [1] * (k + 1)
        placed[j] = -1
        columns.append(em.op("Expand", [em.op("Reshape", [line, em.const(placed)]), shape]))
    columns.append(em.op("Expand", [em.const(np.ones([1] * (k + 1)), np.float32), shape]))
    return em.op("Concat", columns, axis=-1)


def _torch_size_one(em, theta: str, size: str) -> str:
    """theta with the column of every size-1 output dim zeroed: ONNX's AffineGrid then gives
    torch's grid for ``align_corners=1`` (the coordinate there is 0, so the column drops out)."""
    # Spatial dims last first (W, H, D: theta's column order), 0.0 where a dim is 1.
    dims = em.op("Slice", [size, em.const([-1]), em.const([1]), em.const([0]), em.const([-1])])
    keep = em.op("Cast", [em.op("Not", [em.op("Equal", [dims, em.const([1])])])], to=TensorProto.FLOAT)
    mask = em.op("Concat", [keep, em.const([1.0], np.float32)], axis=0)
    return em.op("Mul", [theta, em.op("CastLike", [mask, theta])])
