"""Running a cut region at one set of dims: the variable (when fed), concrete dims for its
``Shape``/``Size`` leaves and concrete sizes for its run-time int tensors go in (``Probe``), the
values of nodes the caller computes itself are added (``emulate``: ops onnxruntime cannot run),
and the region's output comes out. Whatever stops a run becomes ``DoesNotRun`` with its reason."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..errors import SurgeonError
from .region import DoesNotRun, Probe, Region


@contextmanager
def probe_failure():
    """What stops a run of the region, as a ``DoesNotRun`` with its reason."""
    try:
        yield
    except SurgeonError as exc:
        raise DoesNotRun(str(exc)) from None
    except (ValueError, IndexError, TypeError, OverflowError) as exc:  # a size that makes no sense
        raise DoesNotRun(f"{type(exc).__name__}: {exc}") from None


@dataclass
class Run:
    output: np.ndarray
    sizes: dict  # what ``emulate`` measured on the way (the caller's: sizes of its own nodes)


class RegionRunner:
    """Runs a region on the engine's probes. ``emulate(feeds)`` (override it) adds the values of
    the nodes the caller computes itself and returns what it measured; ``dtype`` is the
    variable's element type as numpy."""

    def __init__(self, ctx, region: Region, symbols, dtype):
        self.ctx, self.region, self.symbols, self.dtype = ctx, region, symbols, dtype
        self.everything: list[str] = []  # see share_session_with_proof
        self.values_seen: dict = {}

    def value(self, name: str, feeds: dict) -> np.ndarray:
        if name in feeds:
            return feeds[name]
        constant = self.ctx.constant(name)
        if constant is not None:
            return constant
        return self.ctx.evaluate([name], feeds)[0]

    def feeds(self, assign: dict[int, int], variable: np.ndarray | None) -> dict:
        probe = Probe(self.ctx, self.region, self.symbols.at(assign))
        if variable is not None:
            variable = variable.reshape(probe.shape(self.region.variable)).astype(self.dtype)
        return probe.feeds(variable)

    def emulate(self, feeds: dict) -> dict:
        return {}

    def inputs(self, assign: dict[int, int], variable: np.ndarray | None) -> tuple[dict, dict]:
        """Everything the region reads at these dims, and what ``emulate`` measured."""
        feeds = self.feeds(assign, variable)
        with probe_failure():
            sizes = self.emulate(feeds)
        return feeds, sizes

    def share_session_with_proof(self, feeds: dict, values: dict) -> None:
        """Ask for every value the region computes on each run, as the proof did: one session for
        both (worth it for small regions; a run then copies every intermediate out). The proof's
        own run is kept: the first check asks for it again."""
        self.everything = [o for n in self.region.nodes for o in n.outputs if o]
        if self.region.output in values:
            self.values_seen = {self.region.output: (feeds, np.asarray(values[self.region.output]))}

    def run(self, assign: dict[int, int], variable: np.ndarray | None) -> Run:
        feeds, sizes = self.inputs(assign, variable)
        output = self.region.output
        with probe_failure():
            everything = [o for o in self.everything if o not in feeds]
            if output in self.values_seen:  # the proof's own run: the same feeds
                seen_feeds, seen = self.values_seen[output]
                if seen_feeds.keys() == feeds.keys() and all(np.array_equal(seen_feeds[k], feeds[k]) for k in feeds):
                    return Run(seen, sizes)
            if output in everything:
                result = np.asarray(self.ctx.evaluate(everything, feeds)[everything.index(output)])
            else:
                result = np.asarray(self.value(output, feeds))
        return Run(result, sizes)
