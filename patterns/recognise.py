"""Is a sampler's grid an affine grid, and of what? The steps in order (cut, prove, identify) for
every cut and strategy before the answer is no (``surgeon.recognise.strategies``): cuts at
theta-shaped values nearest the grid first, then further up (a transposed square matrix, or one
of several candidates computed from another, is walked through); theta as it is, then, for a
grid that reads no run-time theta, a theta fitted to the grid's values, then an affine map of a
run-time theta."""

from __future__ import annotations

from dataclasses import dataclass

from surgeon import MatchContext, Refusal
from surgeon.recognise import Cuts, Region, Symbols, Verdicts, region_symbols, strategies

from .cut import ThetaLayout, cut_grid, theta_layout
from .identify import MODES, Identifier
from .samplers import Sampler
from .verdict import Verdict


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
        self.verdicts = Verdicts()

    def __call__(self, ctx: MatchContext, sampler: Sampler) -> Recognition | Refusal:
        cuts = Cuts(ctx, lambda past: cut_grid(ctx, sampler.grid, sampler.x, self.pattern_name, past))
        return strategies(cuts, MODES, ("fixed",), lambda cut, mode: self._one(ctx, sampler, cut, mode), _joined)

    def _one(self, ctx: MatchContext, sampler: Sampler, cut: Region, mode: str) -> Recognition | Refusal:
        k = None
        if mode == "fixed":
            dims = ctx.shape(sampler.x) or ctx.shape(cut.output)
            k = len(dims) - 2 if dims and len(dims) in (4, 5) else 2
        symbols = symbols_for(ctx, cut, sampler, k)
        if isinstance(symbols, Refusal):
            return symbols
        verdict = self.verdicts(ctx, cut, symbols, (ctx.opset(""), sampler.align_corners, mode),
                                lambda: Identifier(ctx, cut, symbols, sampler.align_corners, mode).identify())
        if isinstance(verdict, Refusal):
            return verdict
        layout = theta_layout(symbols.owners[cut.variable]) if mode != "fixed" else None
        return Recognition(cut, symbols, verdict, layout)


def symbols_for(ctx, trace, sampler, k: int | None = None) -> Symbols | Refusal:
    """The dim classes of a cut region, or why its tensors cannot be probed. Without a theta
    (a grid fitted from its values) ``k`` gives the grid's rank."""
    image_dims = ctx.shape(sampler.x)
    dims_of = {}
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
        dims_of[trace.variable] = tuple(theta_dims)
    if image_dims is None:
        image_dims = (None,) * (k + 2)
    if len(image_dims) != k + 2:
        return Refusal(f"the image has rank {len(image_dims)} but the grid is {k}-D")
    return region_symbols(ctx, trace, sampler.x, {sampler.x: tuple(image_dims), **dims_of})


def _joined(first: Refusal | None, found: Refusal, mode: str) -> Refusal:
    """The first strategy's refusal; a map that was found but then failed says more: added."""
    if first is None:
        return found
    if mode == "map" and not found.reason.startswith("no affine map") and found.reason != first.reason:
        return Refusal(f"{first.reason}; as an affine map of theta: {found.reason}")
    return first
