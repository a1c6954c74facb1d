"""The abstract value of a tensor, element by element, for proving what a region computes.

Every element of every value in a region is one of:

- KNOWN: a constant, the same at every input dim and every value of the variables;
- DIMS: depends on the inputs only through their dims (a size, a linspace), with bounds that
  hold at every admissible dim (dims are at least 1);
- AFFINE: an affine function of the variables (the region's run-time leaves being proved over),
  with coefficients that may depend on dims;
- OTHER: anything else (a product of two affine values, a clamp, a branch on the variables).

``reads`` is a bitmask per element: which elements of one variable item (a ``[k, k+1]``
matrix, say) it was computed from, whatever the arithmetic. The concrete value of every element
at the probe's dims comes with it (``Abstract`` never stores it; the rules get it beside).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KNOWN, DIMS, AFFINE, OTHER = 0, 1, 2, 3
NAMES = {KNOWN: "constant", DIMS: "shape-derived", AFFINE: "affine", OTHER: "neither"}
NO_DIM, BRANCHED = -1, -2  # ``sym`` values besides input dims: none; the outcome of a branch on sizes


class NotProved(Exception):
    """The region is not in the family asked for; the message names the op, leaf or step."""


@dataclass
class Abstract:
    kind: np.ndarray  # int8 per element
    reads: np.ndarray  # uint32 per element: variable element positions it depends on
    lo: np.ndarray  # float64 per element: bounds of DIMS elements over all dims (KNOWN: its value)
    hi: np.ndarray
    why: str | None = None  # the first op that made an element OTHER
    data: str | None = None  # a run-time integer input this derives from (read as a size)
    sym: np.ndarray | None = None  # int32 per element: which input dim it is exactly (-1: none)
    axes: tuple | None = None  # per axis: which input dim its length is (-1: none; axes.py)
    branch: str | None = None  # the first branch on sizes an element or axis length came out of
    resized: str | None = None  # a branch on sizes that set the length of some axis (``axes`` says which)
    varies: bool = False  # the length of some axis follows the dims (a constant Expand'ed to W, say)

    @property
    def shape(self) -> tuple:
        return self.kind.shape

    def top(self) -> int:
        return int(self.kind.max()) if self.kind.size else KNOWN

    def syms(self) -> np.ndarray:
        return self.sym if self.sym is not None else np.full(self.kind.shape, -1, np.int32)

    def all_reads(self) -> int:
        return int(np.bitwise_or.reduce(self.reads, axis=None)) if self.reads.size else 0


def known(value: np.ndarray) -> Abstract:
    value = np.asarray(value)
    shape = value.shape
    bounds = _as_bounds(value)
    return Abstract(np.zeros(shape, np.int8), np.zeros(shape, np.uint32), bounds, bounds.copy())


def dims(shape, lo, hi, data: str | None = None, sym=None) -> Abstract:
    """Shape-derived elements with bounds (``lo``/``hi`` broadcast to ``shape``); ``sym``: per
    element, which input dim (a class of equal dims) it is exactly, -1 for none."""
    return Abstract(np.full(shape, DIMS, np.int8), np.zeros(shape, np.uint32),
                    np.broadcast_to(np.asarray(lo, np.float64), shape).copy(),
                    np.broadcast_to(np.asarray(hi, np.float64), shape).copy(), data=data,
                    sym=None if sym is None else np.broadcast_to(np.asarray(sym, np.int32), shape).copy())


def variable(shape, item: int) -> Abstract:
    """A run-time leaf proved over: element i of each item reads bit ``i % item``."""
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % max(item, 1)
    reads = (np.uint32(1) << positions.astype(np.uint32)).astype(np.uint32)
    inf = np.full(shape, np.inf)
    return Abstract(np.full(shape, AFFINE, np.int8), reads, -inf, inf)


def _as_bounds(value: np.ndarray) -> np.ndarray:
    if value.dtype.kind in "biuf":
        return value.astype(np.float64)
    return np.full(value.shape, np.nan)


def move(a: Abstract, fn) -> Abstract:
    """The same data movement (reshape, transpose, gather...) applied to every part."""
    return Abstract(fn(a.kind), fn(a.reads), fn(a.lo), fn(a.hi), a.why, a.data,
                    None if a.sym is None else fn(a.sym), branch=a.branch, resized=a.resized, varies=a.varies)


def merge_meta(parts) -> tuple[str | None, str | None]:
    parts = [p for p in parts if p is not None]
    why = next((p.why for p in parts if p.why), None)
    data = next((p.data for p in parts if p.data), None)
    return why, data


def branch_of(parts) -> str | None:
    """The branch on sizes any element of ``parts`` came out of (None: none did)."""
    for p in parts:
        if p is not None and p.sym is not None and (p.sym == BRANCHED).any():
            return p.branch or "a branch on sizes"
    return None


def branched(parts, shape) -> np.ndarray:
    """Elements computed from an element that came out of a branch on sizes."""
    out = np.zeros(shape, bool)
    for p in parts:
        if p is not None and p.sym is not None:
            out |= np.broadcast_to(p.sym == BRANCHED, shape)
    return out


def mark_branch(result: "Abstract", mask: np.ndarray, message: str | None) -> "Abstract":
    """Elements that depend on a branch on sizes: shape-derived ones carry it (harmless where they
    only size an axis the consumer constrains); ones that depend on the variables are "neither"
    (their coefficients would differ past the sizes a probe tries)."""
    if not mask.any():
        return result
    message = message or result.branch
    high = mask & (result.kind >= AFFINE)
    if high.any():
        result.kind = np.where(high, OTHER, result.kind).astype(np.int8)
        result.why = result.why or message
    low = mask & (result.kind <= DIMS)
    sym = result.syms().copy()
    sym[low] = BRANCHED
    result.kind = np.where(low, DIMS, result.kind).astype(np.int8)
    result.sym = sym
    result.branch = result.branch or message
    return result


def broadcast(parts: list[Abstract], shape) -> list[Abstract]:
    return [move(p, lambda x: np.broadcast_to(x, shape)) for p in parts]


def combine(parts: list[Abstract], shape, kind: np.ndarray, lo=None, hi=None, why=None) -> Abstract:
    """An elementwise result of ``parts`` (already broadcast): reads are the union."""
    reads = np.zeros(shape, np.uint32)
    for p in parts:
        reads = reads | np.broadcast_to(p.reads, shape)
    inherited, data = merge_meta(parts)
    lo = np.full(shape, -np.inf) if lo is None else np.broadcast_to(lo, shape).astype(np.float64)
    hi = np.full(shape, np.inf) if hi is None else np.broadcast_to(hi, shape).astype(np.float64)
    result = Abstract(np.array(kind, dtype=np.int8), reads, lo.copy(), hi.copy(),
                      inherited or (why if (kind == OTHER).any() else None), data)
    source = next((p.branch for p in parts if p is not None and p.branch), None)
    return mark_branch(result, branched(parts, shape), source)


def reduce(a: Abstract, axes: tuple, keepdims: bool, kind_fn=np.max) -> Abstract:
    """Every output element depends on all the elements it reduces over."""
    kind = kind_fn(a.kind, axis=axes, keepdims=keepdims).astype(np.int8)
    reads = np.bitwise_or.reduce(a.reads, axis=axes, keepdims=keepdims) if a.reads.size else \
        np.zeros(kind.shape, np.uint32)
    inf = np.full(kind.shape, np.inf)
    if a.varies:  # how many elements it reduces follows the dims: W ones sum to W
        kind = np.maximum(kind, DIMS).astype(np.int8)
    result = Abstract(kind, reads.astype(np.uint32), -inf, inf, a.why, a.data, varies=a.varies)
    if a.sym is not None:
        mask = np.any(a.sym == BRANCHED, axis=axes, keepdims=keepdims)
        result = mark_branch(result, np.asarray(mask), a.branch)
    return result


def spread(a: Abstract, shape, branch: str | None = None) -> Abstract:
    """Every output element may depend on any input element (indices that change with dims);
    ``branch``: the indices came out of a branch on sizes. Constants that differ are picked by the
    dims, so the pick is shape-derived (a table gathered at an index computed from W)."""
    inf = np.full(shape, np.inf)
    top = a.top()
    if top == KNOWN and a.lo.size and not (a.lo.min() == a.hi.max()):
        top = DIMS
    lo, hi = (np.full(shape, a.lo.min()), np.full(shape, a.hi.max())) if top == DIMS and a.top() == KNOWN else (-inf, inf)
    result = Abstract(np.full(shape, top, np.int8), np.full(shape, a.all_reads(), np.uint32), lo, hi,
                      a.why, a.data, branch=a.branch, varies=a.varies)
    mask = np.full(shape, bool(branch) or (a.sym is not None and bool((a.sym == BRANCHED).any())))
    return mark_branch(result, mask, branch or a.branch)
