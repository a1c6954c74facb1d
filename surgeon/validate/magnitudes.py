"""Draws that reveal scale: each row or channel of a tensor at its own magnitude, 1e-4 to 1e4.

The model's own draws put every element in one range (inputs.py: up to 8), where an epsilon
placed outside a square root, a dropped normalisation or a gate cut at the wrong constant
differ by less than rounding. They show on rows of small or large magnitude: an RMSNorm whose
epsilon (1e-6) moved out of the square root is 2 off on rows of magnitude 6e-4 and 1e-7 off on
rows of magnitude 1. So a tensor is cut into groups, each drawn as the usual signed values
(inputs.py) times a magnitude of its own:

- the groups are the slices of the fewest leading axes that give at least two (``[N, C, H, W]``
  with ``N = 1``: channels; ``[2, 512]``: rows; ``[1, 1, 64]``: the one row), so a
  normalisation over the trailing axes sees a whole group at one magnitude;
- three draws: magnitudes spread over the whole range (groups apart by orders of magnitude:
  a normalisation over the wrong axis shows), all small (1e-4 to 1e-2: near an epsilon, near
  zero) and all large (1e2 to 1e4: a gate far negative or far positive). A type with less range
  (float16) keeps squares finite: its range narrows to ``sqrt(tiny)`` .. ``sqrt(max) / 8``.
"""

from __future__ import annotations

import math

import numpy as np

from ..runtime.inputs import FLOAT_LARGEST, random_floats

LOW, HIGH = 1e-4, 1e4
KINDS = ("spread", "small", "large")


def magnitude_range(dtype) -> tuple[float, float]:
    info = np.finfo(dtype)
    return max(LOW, math.sqrt(float(info.tiny))), min(HIGH, math.sqrt(float(info.max)) / FLOAT_LARGEST)


def group_shape(shape) -> tuple[int, ...]:
    """The shape of one magnitude per group (broadcast over the rest)."""
    rank = len(shape)
    if rank < 2:
        return (1,) * rank
    lead = next((p for p in range(1, rank) if math.prod(shape[:p]) >= 2), rank - 1)
    return tuple(shape[:lead]) + (1,) * (rank - lead)


def draw(shape, dtype, rng: np.random.Generator, kind: str) -> np.ndarray:
    """Signed values, each group of ``shape`` at a magnitude ``kind`` says (``KINDS``)."""
    low, high = (math.log10(v) for v in magnitude_range(dtype))
    quarter = (high - low) / 4
    lo, hi = {"spread": (low, high), "small": (low, low + quarter), "large": (high - quarter, high)}[kind]
    groups = group_shape(shape)
    count = math.prod(groups)
    slots = (rng.permutation(count) + rng.random(count)) / count  # one per stratum: the range covered
    magnitudes = 10.0 ** (lo + (hi - lo) * slots).reshape(groups)
    return (random_floats(rng, shape, np.float64) * magnitudes).astype(dtype)


def describe(kind: str, dtype) -> str:
    """The draw in words, for a comparison's name: ``small: rows at 1e-4..1e-2``."""
    low, high = magnitude_range(dtype)
    quarter = (high / low) ** 0.25
    span = {"spread": (low, high), "small": (low, low * quarter), "large": (high / quarter, high)}[kind]
    return f"{kind}: rows at {_short(span[0])}..{_short(span[1])}"


def _short(v: float) -> str:
    return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
