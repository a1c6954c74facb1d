"""Is a sampler's grid an affine grid, and of what? Trace the grid back to a theta cut, probe the
region (or fit a constant grid), and retry further up when a cut does not verify."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from surgeon import MatchContext

from .constant_grid import fit_constant_grid
from .probe import Prober, Verdict
from .samplers import Sampler
from .signature import region_key
from .symbols import Symbols, symbols_for
from .trace import ThetaLayout, Trace, theta_layout, trace_grid

MAX_CUTS = 3  # theta-shaped cuts tried, nearest to the grid first


@dataclass
class Recognition:
    trace: Trace
    symbols: Symbols
    verdict: Verdict
    layout: ThetaLayout
    theta_value: np.ndarray | None = None  # theta fitted to a constant grid

    @property
    def theta(self) -> str | None:
        """The value the rewrite reads as theta (None: it writes the fitted one)."""
        return self.trace.theta if self.theta_value is None else None


class Recogniser:
    """Holds the probe verdicts of one pattern instance, keyed by region structure."""

    def __init__(self, pattern_name: str):
        self.pattern_name = pattern_name
        self.verdicts: dict[tuple, Verdict] = {}

    def __call__(self, ctx: MatchContext, sampler: Sampler) -> Recognition | str:
        """The recognition, or the first reason the grid is not an affine grid. A transposed
        square matrix is theta-shaped too: a cut that does not verify is retried further up.
        A grid of a transformed theta is only looked for once no cut verifies as it is."""
        first_reason = None
        for allow_map in (False, True):
            past: set[str] = set()
            for _ in range(MAX_CUTS):
                trace = trace_grid(ctx, sampler.grid, sampler.x, self.pattern_name, frozenset(past))
                if isinstance(trace, str):
                    return first_reason or trace
                found = self._one_cut(ctx, sampler, trace, allow_map)
                if isinstance(found, Recognition):
                    return found
                first_reason = first_reason or found
                if trace.theta is None or ctx.producer(trace.theta) is None:
                    break
                past.add(trace.theta)
        return first_reason

    def _one_cut(self, ctx: MatchContext, sampler: Sampler, trace: Trace, allow_map: bool) -> Recognition | str:
        if trace.theta is None:
            return self._fit(ctx, sampler, trace)
        symbols = symbols_for(ctx, trace, sampler)
        if isinstance(symbols, str):
            return symbols
        verdict = self._verdict(ctx, trace, symbols, sampler, allow_map)
        if verdict.reason and trace.constant_theta and not trace.shape_leaves:
            # A fixed theta used some other way (pixel units, say): the grid is still a
            # constant, and may still be an affine grid of some other theta.
            fitted = self._fit(ctx, sampler, trace)
            if isinstance(fitted, Recognition):
                return fitted
        if verdict.reason:
            return verdict.reason
        return Recognition(trace, symbols, verdict, theta_layout(symbols.owners[trace.theta].dims))

    @staticmethod
    def _fit(ctx: MatchContext, sampler: Sampler, trace: Trace) -> Recognition | str:
        fitted = fit_constant_grid(ctx, trace, sampler.align_corners)
        if isinstance(fitted, str):
            return fitted
        verdict, theta = fitted
        symbols = symbols_for(ctx, trace, sampler, k=verdict.k, constant=True)
        return Recognition(trace, symbols, verdict, ThetaLayout(verdict.k, verdict.k + 1, False), theta)

    def _verdict(self, ctx: MatchContext, trace: Trace, symbols: Symbols, sampler: Sampler,
                 allow_map: bool) -> Verdict:
        try:
            key = region_key(ctx, trace, symbols, sampler.x, (ctx.opset(""), sampler.align_corners, allow_map))
        except ValueError as exc:
            return Verdict(reason=str(exc))
        if key not in self.verdicts:
            self.verdicts[key] = Prober(ctx, trace, symbols, sampler.align_corners, allow_map).probe()
        return self.verdicts[key]
