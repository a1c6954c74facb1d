"""Is a sampler's grid an affine grid, and of what? The steps in order (cut, prove, identify) for
every cut and strategy before the answer is no: cuts at theta-shaped values nearest the grid
first, then further up (a transposed square matrix, or one of several candidates computed from
another, is walked through); theta as it is, then an affine map of it; then, for a grid that
reads no run-time theta, a theta fitted to the grid's values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from surgeon import MatchContext, Refusal
from surgeon.recognise import Region, Symbols, symbolic_key

from .cut import ThetaLayout, cut_grid, theta_layout
from .identify import MODES, Identifier
from .samplers import Sampler
from .verdict import Verdict

MAX_CUTS = 6  # cuts tried per sampler, nearest first


@dataclass
class Recognition:
    cut: Region
    symbols: Symbols
    verdict: Verdict
    layout: ThetaLayout | None

    @property
    def theta(self) -> str | None:
        """The value the rewrite reads as theta (None: it writes the fitted one)."""
        return None if self.verdict.theta_value is not None else self.cut.variable


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
                if not isinstance(cut, Region):
                    continue
                if mode == "fixed":
                    if cut.variable is not None and not cut.constant_variable:
                        continue
                    cut = dataclasses.replace(cut, variable=None)
                elif cut.variable is None:
                    continue
                found = self._one(ctx, sampler, cut, mode)
                if isinstance(found, Recognition):
                    return found
                refusals[i] = _joined(refusals.get(i), found, mode)
        # A strategy's refusal says what disagreed; a cut's only why no cut was found there.
        ordered = [refusals[i] for i in sorted(refusals)] + [c for c in cuts.made if isinstance(c, Refusal)]
        return ordered[0] if ordered else Refusal("no cut found")

    def _one(self, ctx: MatchContext, sampler: Sampler, cut: Region, mode: str) -> Recognition | Refusal:
        k = None
        if mode == "fixed":
            dims = ctx.shape(sampler.x) or ctx.shape(cut.output)
            k = len(dims) - 2 if dims and len(dims) in (4, 5) else 2
        symbols = symbols_for(ctx, cut, sampler, k)
        if isinstance(symbols, Refusal):
            return symbols
        try:
            key = symbolic_key(ctx, cut, symbols, (ctx.opset(""), sampler.align_corners, mode))
        except ValueError as exc:
            return Refusal(str(exc))
        if key not in self.verdicts:
            self.verdicts[key] = Identifier(ctx, cut, symbols, sampler.align_corners, mode).identify()
        verdict = self.verdicts[key]
        if isinstance(verdict, Refusal):
            return verdict
        layout = theta_layout(symbols.owners[cut.variable]) if mode != "fixed" else None
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
            cut, through = cut_grid(self.ctx, self.sampler.grid, self.sampler.x, self.pattern_name, past)
            self.made.append(cut)
            if isinstance(cut, Refusal):
                if through:
                    self.todo.append(past | frozenset(through))
            elif cut.variable is not None and self.ctx.producer(cut.variable) is not None:
                self.todo.append(past | {cut.variable})
            return True
        return False


def symbols_for(ctx, trace, sampler, k: int | None = None) -> Symbols | Refusal:
    """The dim classes of a cut region, or why its tensors cannot be probed. Without a theta
    (a grid fitted from its values) ``k`` gives the grid's rank."""
    image_dims = ctx.shape(sampler.x)
    theta_dims = None
    if trace.variable is not None:
        theta_dims = ctx.shape(trace.variable)
        if theta_layout(theta_dims) is None:
            # A grid op's theta input is theta by meaning, even when its shape is not known.
            known_theta = any(op.theta == trace.variable for op in trace.computed)
            if theta_dims is not None or not known_theta or image_dims is None or len(image_dims) not in (4, 5):
                return Refusal(f"theta {trace.variable!r} has shape {theta_dims}, not [N, 2, 3] / [N, 3, 4]")
            kk = len(image_dims) - 2
            theta_dims = (None, kk, kk + 1)
        k = theta_layout(theta_dims).k
    if image_dims is None:
        image_dims = (None,) * (k + 2)
    if len(image_dims) != k + 2:
        return Refusal(f"the image has rank {len(image_dims)} but the grid is {k}-D")
    dims_of = {sampler.x: tuple(image_dims)}
    if trace.variable is not None:
        dims_of[trace.variable] = tuple(theta_dims)
    for leaf in trace.shapes:
        source = leaf.inputs[0]
        if source not in dims_of:
            dims = ctx.shape(source)
            if dims is None:
                return Refusal(f"cannot probe: the rank of {source!r} (read by {leaf.label}) is unknown")
            dims_of[source] = tuple(dims)
    ints = {}
    for value in trace.ints:
        dims = ctx.shape(value)
        ints[value] = 1 if not dims else int(dims[0])
    return Symbols(dims_of, sampler.x, trace.variable, ints)


def _joined(first: Refusal | None, found: Refusal, mode: str) -> Refusal:
    """The first strategy's refusal; a map that was found but then failed says more: added."""
    if first is None:
        return found
    if mode == "map" and not found.reason.startswith("no affine map") and found.reason != first.reason:
        return Refusal(f"{first.reason}; as an affine map of theta: {found.reason}")
    return first
