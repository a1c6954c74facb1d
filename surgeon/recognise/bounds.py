"""Bounds of shape-derived elements over every admissible dim, and the decisions they settle.

A comparison, ``Min``/``Max``, ``Clip`` or ``Where`` on values derived from dims is a branch on
the input's sizes unless its outcome is the same at every dim: ``Equal(N, -1)`` (TorchScript's
Expand) is always false because a dim is at least 1; ``Min(W, 64)`` is not decided, and a
region holding it would be proved only for the sizes a probe happens to try.
"""

from __future__ import annotations

import numpy as np

from .elements import AFFINE, DIMS, KNOWN, Abstract


def limits(a: Abstract, shape) -> tuple[np.ndarray, np.ndarray]:
    return np.broadcast_to(a.lo, shape), np.broadcast_to(a.hi, shape)


def _clean(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = np.where(np.isnan(lo), -np.inf, lo)
    hi = np.where(np.isnan(hi), np.inf, hi)
    return lo, hi


def add(a, b, shape, sign: float = 1.0):
    alo, ahi = limits(a, shape)
    blo, bhi = limits(b, shape)
    with np.errstate(invalid="ignore", over="ignore"):
        if sign > 0:
            return _clean(alo + blo, ahi + bhi)
        return _clean(alo - bhi, ahi - blo)


def mul(a, b, shape):
    alo, ahi = limits(a, shape)
    blo, bhi = limits(b, shape)
    with np.errstate(invalid="ignore", over="ignore"):
        corners = np.stack([alo * blo, alo * bhi, ahi * blo, ahi * bhi])
    bad = np.isnan(corners).any(axis=0)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    return np.where(bad, -np.inf, lo), np.where(bad, np.inf, hi)


def div(a, b, shape):
    blo, bhi = limits(b, shape)
    crosses = (blo <= 0) & (bhi >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_lo, inv_hi = 1.0 / np.where(crosses, 1.0, bhi), 1.0 / np.where(crosses, 1.0, blo)
    inverse = Abstract(a.kind, a.reads, np.where(crosses, -np.inf, inv_lo), np.where(crosses, np.inf, inv_hi))
    lo, hi = mul(a, inverse, shape)
    return np.floor(lo), np.ceil(hi)  # integer division rounds either way: widen to whole numbers


def settled(a: Abstract, b: Abstract, shape, op: str) -> np.ndarray | None:
    """Per element True/False where ``a op b`` holds at every dim, None-like (-1) where it depends
    on the dims. Returned as int8: 1 true, 0 false, -1 undecided."""
    alo, ahi = limits(a, shape)
    blo, bhi = limits(b, shape)
    out = np.full(shape, -1, np.int8)
    if op == "Equal":
        out[(ahi < blo) | (bhi < alo)] = 0
        out[(alo == ahi) & (blo == bhi) & (alo == blo)] = 1
    elif op in ("Less", "Greater"):
        lo_a, hi_a, lo_b, hi_b = (alo, ahi, blo, bhi) if op == "Less" else (blo, bhi, alo, ahi)
        out[hi_a < lo_b] = 1
        out[lo_a >= hi_b] = 0
    elif op in ("LessOrEqual", "GreaterOrEqual"):
        lo_a, hi_a, lo_b, hi_b = (alo, ahi, blo, bhi) if op == "LessOrEqual" else (blo, bhi, alo, ahi)
        out[hi_a <= lo_b] = 1
        out[lo_a > hi_b] = 0
    same_dim = (np.broadcast_to(a.syms(), shape) >= 0) & (np.broadcast_to(a.syms(), shape) ==
                                                            np.broadcast_to(b.syms(), shape))
    out[same_dim] = 1 if op in ("Equal", "LessOrEqual", "GreaterOrEqual") else 0
    return out


BRANCH = "a branch on"  # every branch's message says it: a refusal can tell a branch from an op


def branch(node_label: str, what: str, parts) -> str:
    """How a branch on sizes (or on a run-time integer input) is named in a refusal."""
    data = next((p.data for p in parts if p is not None and p.data), None)
    if data:
        return (f"{node_label} {what} the run-time integer input {data!r}: {BRANCH} a run-time value, which may go "
                "the other way past the values a probe tries")
    return (f"{node_label} {what} values derived from the input dims: {BRANCH} sizes, which may go the other way "
            "past the sizes a probe tries (fixing the dims with --input-shape folds it)")


def needs_decision(kinds: list[np.ndarray]) -> np.ndarray:
    """Elements where every operand is known or shape-derived and one is shape-derived."""
    low = np.all([k <= DIMS for k in kinds], axis=0)
    some = np.any([k == DIMS for k in kinds], axis=0)
    return low & some


def variable_dependent(kinds: list[np.ndarray]) -> np.ndarray:
    return np.any([k >= AFFINE for k in kinds], axis=0)


def all_known(kinds: list[np.ndarray]) -> np.ndarray:
    return np.all([k == KNOWN for k in kinds], axis=0)
