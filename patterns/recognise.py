"""Is a sampler's grid an affine grid, and of what? Every strategy gets its turn before the
answer is no: cuts at theta-shaped values nearest the grid first, then further up (a transposed
square matrix, or one of several candidates computed from another, is walked through); theta as
it is, then an affine map of it; then, for a grid that reads no run-time theta, a theta fitted to
the grid's values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from surgeon import MatchContext

from .probe import Prober, Verdict
from .samplers import Sampler
from .signature import region_key
from .symbols import Symbols, symbols_for
from .trace import ThetaLayout, Trace, TraceError, theta_layout, trace_grid

MAX_CUTS = 4  # traces tried per sampler, nearest cut first
MODES = ("plain", "fixed", "map")


@dataclass
class Recognition:
    trace: Trace
    symbols: Symbols
    verdict: Verdict
    layout: ThetaLayout | None

    @property
    def theta(self) -> str | None:
        """The value the rewrite reads as theta (None: it writes the fitted one)."""
        return None if self.verdict.theta_value is not None else self.trace.theta


class Recogniser:
    """Holds the probe verdicts of one pattern instance, keyed by region structure."""

    def __init__(self, pattern_name: str):
        self.pattern_name = pattern_name
        self.verdicts: dict[tuple, Verdict] = {}

    def __call__(self, ctx: MatchContext, sampler: Sampler) -> Recognition | str:
        traces = self._traces(ctx, sampler)
        reasons: list = [None] * len(traces)  # per trace: its first probe's reason
        # Plain cuts first (a transposed square matrix is cut at the matrix, not mapped); then a
        # grid of constants and shapes only (no theta, or a constant one used in pixel units) is
        # fitted; last, a run-time theta transformed by an affine map.
        for mode in MODES:
            for i, trace in enumerate(traces):
                if not isinstance(trace, Trace):
                    continue
                if mode == "fixed":
                    if trace.theta is not None and not trace.constant_theta:
                        continue
                    trace = dataclasses.replace(trace, theta=None)
                elif trace.theta is None:
                    continue
                found = self._one(ctx, sampler, trace, mode)
                if isinstance(found, Recognition):
                    return found
                reasons[i] = _joined(reasons[i], found, mode)
        # A probe's reason says what disagreed; a trace's only why no cut was found there.
        traced = [t.reason for t in traces if isinstance(t, TraceError)]
        return next((r for r in reasons + traced if r), "no cut found")

    def _traces(self, ctx: MatchContext, sampler: Sampler) -> list:
        """Traces for growing sets of values walked through, nearest cut first."""
        out, todo, tried = [], [frozenset()], set()
        while todo and len(out) < MAX_CUTS:
            past = todo.pop(0)
            if past in tried:
                continue
            tried.add(past)
            trace = trace_grid(ctx, sampler.grid, sampler.x, self.pattern_name, past)
            out.append(trace)
            if isinstance(trace, TraceError):
                if trace.through:
                    todo.append(past | frozenset(trace.through))
            elif trace.theta is not None and ctx.producer(trace.theta) is not None:
                todo.append(past | {trace.theta})
        return out

    def _one(self, ctx: MatchContext, sampler: Sampler, trace: Trace, mode: str) -> Recognition | str:
        k = None
        if mode == "fixed":
            dims = ctx.shape(sampler.x) or ctx.shape(trace.grid)
            k = len(dims) - 2 if dims and len(dims) in (4, 5) else 2
        symbols = symbols_for(ctx, trace, sampler, k)
        if isinstance(symbols, str):
            return symbols
        try:
            key = region_key(ctx, trace, symbols, sampler.x, (ctx.opset(""), sampler.align_corners, mode))
        except ValueError as exc:
            return str(exc)
        if key not in self.verdicts:
            self.verdicts[key] = Prober(ctx, trace, symbols, sampler.align_corners, mode).probe()
        verdict = self.verdicts[key]
        if verdict.reason:
            return verdict.reason
        layout = theta_layout(symbols.owners[trace.theta]) if mode != "fixed" else None
        return Recognition(trace, symbols, verdict, layout)


def _joined(first: str | None, found: str, mode: str) -> str:
    """The first strategy's reason; a map that was found but then failed says more: added."""
    if first is None:
        return found
    if mode == "map" and not found.startswith("no affine map") and found != first:
        return f"{first}; as an affine map of theta: {found}"
    return first
