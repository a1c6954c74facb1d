"""Is a sampler's grid an affine grid, and of what? The steps in order (cut, prove, identify) for
every cut and strategy before the answer is no: cuts at theta-shaped values nearest the grid
first, then further up (a transposed square matrix, or one of several candidates computed from
another, is walked through); theta as it is, then an affine map of it; then, for a grid that
reads no run-time theta, a theta fitted to the grid's values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from surgeon import MatchContext, Refusal

from .cut import Cut, CutRefusal, ThetaLayout, cut_grid, theta_layout
from .dims import Symbols, symbols_for
from .identify import MODES, Identifier
from .samplers import Sampler
from .signature import region_key
from .verdict import Verdict

MAX_CUTS = 6  # cuts tried per sampler, nearest first


@dataclass
class Recognition:
    cut: Cut
    symbols: Symbols
    verdict: Verdict
    layout: ThetaLayout | None

    @property
    def theta(self) -> str | None:
        """The value the rewrite reads as theta (None: it writes the fitted one)."""
        return None if self.verdict.theta_value is not None else self.cut.theta


class GridRecogniser:
    """Holds the verdicts of one pattern instance, keyed by region structure."""

    def __init__(self, pattern_name: str):
        self.pattern_name = pattern_name
        self.verdicts: dict[tuple, Verdict | Refusal] = {}

    def __call__(self, ctx: MatchContext, sampler: Sampler) -> Recognition | Refusal:
        cuts = _Cuts(ctx, sampler, self.pattern_name)  # made as they are asked for: most grids need one
        refusals: dict[int, Refusal] = {}  # per cut: its first strategy's refusal
        # Plain cuts first (a transposed square matrix is cut at the matrix, not mapped); then a
        # grid of constants and shapes only (no theta, or a constant one used in pixel units) is
        # fitted; last, a run-time theta transformed by an affine map.
        for mode in MODES:
            for i, cut in enumerate(cuts):
                if not isinstance(cut, Cut):
                    continue
                if mode == "fixed":
                    if cut.theta is not None and not cut.constant_theta:
                        continue
                    cut = dataclasses.replace(cut, theta=None)
                elif cut.theta is None:
                    continue
                found = self._one(ctx, sampler, cut, mode)
                if isinstance(found, Recognition):
                    return found
                refusals[i] = _joined(refusals.get(i), found, mode)
        # A strategy's refusal says what disagreed; a cut's only why no cut was found there.
        ordered = [refusals[i] for i in sorted(refusals)] + [c for c in cuts.made if isinstance(c, CutRefusal)]
        return ordered[0] if ordered else Refusal("no cut found")

    def _one(self, ctx: MatchContext, sampler: Sampler, cut: Cut, mode: str) -> Recognition | Refusal:
        k = None
        if mode == "fixed":
            dims = ctx.shape(sampler.x) or ctx.shape(cut.grid)
            k = len(dims) - 2 if dims and len(dims) in (4, 5) else 2
        symbols = symbols_for(ctx, cut, sampler, k)
        if isinstance(symbols, Refusal):
            return symbols
        try:
            key = region_key(ctx, cut, symbols, sampler.x, (ctx.opset(""), sampler.align_corners, mode))
        except ValueError as exc:
            return Refusal(str(exc))
        if key not in self.verdicts:
            self.verdicts[key] = Identifier(ctx, cut, symbols, sampler.align_corners, mode).identify()
        verdict = self.verdicts[key]
        if isinstance(verdict, Refusal):
            return verdict
        layout = theta_layout(symbols.owners[cut.theta]) if mode != "fixed" else None
        return Recognition(cut, symbols, verdict, layout)


class _Cuts:
    """Cuts for growing sets of values walked through, nearest first, made when first asked for."""

    def __init__(self, ctx: MatchContext, sampler: Sampler, pattern_name: str):
        self.ctx, self.sampler, self.pattern_name = ctx, sampler, pattern_name
        self.made: list = []
        self.todo, self.tried = [frozenset()], set()

    def __iter__(self):
        i = 0
        while True:
            if i == len(self.made) and not self._next():
                return
            yield self.made[i]
            i += 1

    def _next(self) -> bool:
        while self.todo and len(self.made) < MAX_CUTS:
            past = self.todo.pop(0)
            if past in self.tried:
                continue
            self.tried.add(past)
            cut = cut_grid(self.ctx, self.sampler.grid, self.sampler.x, self.pattern_name, past)
            self.made.append(cut)
            if isinstance(cut, CutRefusal):
                if cut.through:
                    self.todo.append(past | frozenset(cut.through))
            elif cut.theta is not None and self.ctx.producer(cut.theta) is not None:
                self.todo.append(past | {cut.theta})
            return True
        return False


def _joined(first: Refusal | None, found: Refusal, mode: str) -> Refusal:
    """The first strategy's refusal; a map that was found but then failed says more: added."""
    if first is None:
        return found
    if mode == "map" and not found.reason.startswith("no affine map") and found.reason != first.reason:
        return Refusal(f"{first.reason}; as an affine map of theta: {found.reason}")
    return first
