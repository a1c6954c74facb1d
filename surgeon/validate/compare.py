"""Comparing two arrays the way Polygraphy does: an element passes when
``|rewritten - original| <= atol + rtol * |original|``; the report also gives the error
statistics and the smallest atol that would have passed at the given rtol.

An element outside that may still pass as *explained by rounding*: when the rounding probe
(rounding.py) saw the original itself move that far, or take that very value, under a few ulps
of rounding. The comparison counts those apart and says so.

Default tolerances end to end, by the original value's dtype (surgeon/validate/check.py gives the
measurements behind them): float32 atol=rtol=1e-3, float16 1e-2, bfloat16 5e-2, float64 1e-6;
integers and bools must match exactly. Each rewrite is held to a tighter one (tolerance.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..reportfields import figure

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-3, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float64": (1e-6, 1e-6),
}


def default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    dtype = np.dtype(dtype)
    if dtype.name in DEFAULT_TOLERANCES:
        return DEFAULT_TOLERANCES[dtype.name]
    if dtype.kind == "f" or dtype.kind == "c":  # other float widths: as float32
        return DEFAULT_TOLERANCES["float32"]
    return (0.0, 0.0)  # ints, bools: exact


@dataclass
class Comparison:
    """One value of the rewritten model held against the same value of the original."""

    name: str
    passed: bool
    shape: list | None = None
    dtype: str = ""
    atol: float = 0.0
    rtol: float = 0.0
    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None
    required_atol: float | None = None  # the smallest atol that passes at this rtol
    mismatched: int = 0  # elements outside tolerance (NaN/Inf disagreements included)
    total: int = 0
    nonfinite_original: int = 0
    nonfinite_rewritten: int = 0
    worst_index: list | None = None
    explained: int = 0  # elements outside tolerance that the original's own rounding explains
    explained_max: float | None = None  # the largest difference among them
    jumps: bool = False  # those differences are jumps (ties), not a drift of a few ulps
    message: str = ""  # why it failed beyond the numbers (shape, dtype, missing)
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "ok  " if self.passed else "FAIL"

    def describe(self) -> str:
        """One line: the verdict, the value's name and the figures behind the verdict."""
        return f"{self.status} {self.name!r}: {self.details()}"

    def details(self) -> str:
        if self.message:
            return self.message
        if self.max_abs is None:
            return f"{self.dtype}{self.shape}, no finite elements to compare"
        text = (f"max abs {figure(self.max_abs)}, max rel {figure(self.max_rel)}, mean abs {figure(self.mean_abs)}; "
                f"passes at atol {figure(self.required_atol)} (rtol {figure(self.rtol)}; "
                f"given atol {figure(self.atol)})")
        if self.mismatched:
            text += f"; {self.mismatched} of {self.total} element(s) outside tolerance"
            if self.worst_index is not None:
                text += f", worst at {self.worst_index}"
        if self.nonfinite_original or self.nonfinite_rewritten:
            text += f"; NaN/Inf: original {self.nonfinite_original}, rewritten {self.nonfinite_rewritten}"
        if self.explained and self.passed:  # beside a failure it would only blur the line
            text += f"; {self.rounding_note()}"
        return text

    def rounding_note(self) -> str:
        """What the elements explained by rounding are, in words."""
        what = (f"{self.explained} of {self.total} element(s) differ by up to {figure(self.explained_max)} only where "
                "the original itself moves as far when its values move by a few ulps")
        if self.jumps:
            return (what + ": rounding ties (a discontinuous op of the original flips there under a move of its own "
                    "inputs by a few ulps, as nearest sampling does at a coordinate on a pixel boundary); not failures")
        return what + ": rounding the original is sensitive to; not failures"



def missing(name: str, where: str) -> Comparison:
    return Comparison(name, False, message=f"missing from the {where} model")


def compare(name: str, original: np.ndarray, rewritten: np.ndarray, atol: float | None = None,
            rtol: float | None = None, max_mismatch: float = 0.0, rounding=None) -> Comparison:
    """Compare ``rewritten`` against ``original`` (the reference); ``max_mismatch`` is the
    fraction of elements allowed outside tolerance (0: none); ``rounding`` (a
    ``rounding.Sensitivity`` of the original's shape) tells the differences rounding explains."""
    original, rewritten = np.asarray(original), np.asarray(rewritten)
    d_atol, d_rtol = default_tolerance(original.dtype) if original.dtype.kind in "biufc" else (0.0, 0.0)
    atol = d_atol if atol is None else float(atol)
    rtol = d_rtol if rtol is None else float(rtol)
    result = Comparison(name, True, list(original.shape), original.dtype.name, atol, rtol, total=int(original.size))
    if original.shape != rewritten.shape:
        result.passed = False
        result.message = (f"shape differs: original {list(original.shape)}, rewritten {list(rewritten.shape)} "
                          "(a wrong output size?)")
        return result
    if original.dtype != rewritten.dtype:
        result.passed = False
        result.message = f"dtype differs: original {original.dtype.name}, rewritten {rewritten.dtype.name}"
        return result
    if original.dtype.kind not in "biufc":  # strings and the like: equal or not
        result.mismatched = int(np.sum(original != rewritten))
        result.passed = result.mismatched == 0
        return result
    if original.size == 0:
        return result
    a = original.astype(np.complex128 if original.dtype.kind == "c" else np.float64)
    b = rewritten.astype(a.dtype)
    fa, fb = np.isfinite(a), np.isfinite(b)
    result.nonfinite_original = int(a.size - np.count_nonzero(fa))
    result.nonfinite_rewritten = int(b.size - np.count_nonzero(fb))
    both = fa & fb
    # Non-finite values agree when both are NaN, or the same infinity.
    nonfinite_bad = ~both & ~((np.isnan(a) & np.isnan(b)) | (a == b))
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where both are non-finite
        diff = np.where(both, np.abs(a - b), 0.0)
    ref = np.where(both, np.abs(a), 0.0)
    bad = (diff > atol + rtol * ref) | nonfinite_bad
    if rounding is not None and np.shape(rounding.drift) == a.shape:
        by_rounding, jumped = rounding.explains(diff, atol + rtol * ref)
        explained = bad & ~nonfinite_bad & by_rounding
        result.explained = int(np.count_nonzero(explained))
        if result.explained:
            bad &= ~explained
            result.explained_max = float(diff[explained].max())
            result.jumps = bool(np.any(explained & jumped))
    result.mismatched = int(np.count_nonzero(bad))
    if np.any(both):
        result.max_abs = float(diff.max())
        result.mean_abs = float(diff[both].mean())
        nonzero = both & (ref > 0)  # relative error means nothing where the original is 0
        rel = np.where(nonzero, diff / np.where(nonzero, ref, 1.0), 0.0)
        result.max_rel = float(rel.max())
        result.required_atol = float(max(0.0, (diff - rtol * ref).max()))
    if result.mismatched:
        worst = np.where(nonfinite_bad, np.inf, np.where(bad, diff - rtol * ref, -np.inf))
        result.worst_index = [int(i) for i in np.unravel_index(int(np.argmax(worst)), a.shape)]
    if np.any(nonfinite_bad):
        result.notes.append(f"NaN/Inf differ at {int(np.count_nonzero(nonfinite_bad))} element(s)")
        result.required_atol = math.inf
    allowed = math.floor(max_mismatch * a.size)
    result.passed = result.mismatched <= allowed
    if result.passed and result.mismatched:
        result.notes.append(f"{result.mismatched} element(s) outside tolerance, within --max-mismatch")
    return result
