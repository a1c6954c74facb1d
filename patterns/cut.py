"""Step 1, cut: where does run-time data enter the grid? The engine's walk
(``surgeon.recognise.cutting``) back from the sampler's grid, with theta-shaped float values as
its candidates and the known grid ops (``grid_ops.py``) as nodes computed here, their theta input
the candidate.

Decides: the region (``surgeon.recognise.Region``: nodes from the cut, theta its variable, to the
grid, its output; the known grid ops in ``computed``; a homogeneous theta's last row where every
run holds it, in ``fixed``) and its leaves, or a ``Refusal`` naming what the grid reads besides
one theta; with it, the candidates a retry may walk past.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx import TensorProto

from surgeon import MatchContext, Refusal
from surgeon.recognise import Region, Words, cut_back, fixed_elements
from surgeon_ops.theta_forms import MATRICES, matrix_dims

from .grid_ops import read_known_grid

_FLOATS = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
WORDS = Words("grid", "theta-shaped")


@dataclass
class ThetaLayout:
    rows: int
    cols: int
    flat: bool  # [N, rows*cols] rather than [N, rows, cols]

    @property
    def k(self) -> int:
        return MATRICES[(self.rows, self.cols)][0]

    @property
    def homogeneous(self) -> bool:
        return MATRICES[(self.rows, self.cols)][1]


def theta_layout(dims) -> ThetaLayout | None:
    found = matrix_dims(dims)
    return ThetaLayout(found[0], found[1], len(dims) == 2) if found else None


def theta_form(ctx: MatchContext, value: str) -> tuple[int, int] | None:
    dtype = ctx.dtype(value)
    if dtype is not None and dtype not in _FLOATS:
        return None
    return matrix_dims(ctx.shape(value))


def cut_grid(ctx: MatchContext, grid: str, image: str, pattern_name: str,
             past=frozenset()) -> tuple[Region | Refusal, list[str]]:
    """The grid's region and its theta, or why it is not one theta's grid, and the candidates a
    retry may walk through (several theta-shaped tensors, one computed from another). Values in ``past``
    are walked through, not taken as the cut (a transposed square matrix looks like theta too)."""
    def known(node):
        op = read_known_grid(ctx, node, pattern_name)
        return None if op is None else (op, op.theta)

    region, through = cut_back(ctx, grid, image, lambda c, v: theta_form(c, v) is not None, known, past, WORDS)
    if isinstance(region, Region) and not region.constant_variable:
        region.fixed = _last_row(ctx, region.variable)
    return region, through


def _last_row(ctx: MatchContext, theta: str) -> dict:
    """A homogeneous theta's last row where every run of the model holds it (kornia's
    ``[M; 0 0 1]`` through a normalisation and an inverse: exactly (0, 0, 1), proved by
    ``surgeon.recognise.exact``): flat position -> value. Its grid divides by that row."""
    layout = theta_layout(ctx.shape(theta))
    if layout is None or not layout.homogeneous or ctx.producer(theta) is None:
        return {}
    found = fixed_elements(ctx, theta, 1 if layout.flat else 2)
    return {pos: value for pos, value in found.items() if pos // layout.cols >= layout.k}
