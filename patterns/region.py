"""Run a cut region once: theta (when fed), concrete dims for its ``Shape``/``Size`` leaves,
concrete sizes for its run-time int tensors, and the analytic grids of known grid ops (which
onnxruntime cannot always run) go in; the grid comes out."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from surgeon import MatchContext, SurgeonError
from surgeon.recognise import DoesNotRun, Probe, Region

from .analytic import affine_grid


@contextmanager
def _probe_failure():
    """What stops a run of the region, as a ``DoesNotRun`` with its reason."""
    try:
        yield
    except SurgeonError as exc:
        raise DoesNotRun(str(exc)) from None
    except (ValueError, IndexError, TypeError, OverflowError) as exc:  # a size that makes no sense
        raise DoesNotRun(f"{type(exc).__name__}: {exc}") from None


@dataclass
class Run:
    grid: np.ndarray
    sizes: dict  # known grid op index -> its evaluated size tensor (list of ints)


class GridRunner:
    """Runs the pattern's region on the engine's probes, the known grid ops computed here."""

    def __init__(self, ctx: MatchContext, cut: Region, symbols, dtype):
        self.ctx, self.cut, self.symbols = ctx, cut, symbols
        self.everything: list[str] = []  # see share_session_with_proof
        self.values_seen: dict = {}
        self.dtype = dtype  # theta's element type as numpy

    def _value(self, name: str, feeds: dict) -> np.ndarray:
        if name in feeds:
            return feeds[name]
        constant = self.ctx.constant(name)
        if constant is not None:
            return constant
        return self.ctx.evaluate([name], feeds)[0]

    def feeds(self, assign: dict[int, int], theta: np.ndarray | None) -> dict:
        probe = Probe(self.ctx, self.cut, self.symbols.at(assign))
        if theta is not None:
            theta = theta.reshape(probe.shape(self.cut.variable)).astype(self.dtype)
        return probe.feeds(theta)

    def inputs(self, assign: dict[int, int], theta: np.ndarray | None) -> tuple[dict, dict]:
        """Everything the region reads at these dims: the feeds, with the grids of the known grid
        ops onnxruntime cannot run computed analytically; and each known op's size tensor."""
        feeds = self.feeds(assign, theta)
        sizes = {}
        with _probe_failure():
            for i, op in enumerate(self.cut.computed):
                if op.size is not None:
                    sizes[i] = [int(s) for s in np.asarray(self._value(op.size, feeds)).reshape(-1)]
                    spatial = sizes[i][2:]
                else:
                    spatial = list(op.output_size)
                if not op.emulated:
                    continue  # onnxruntime computes it with the rest of the region
                raw = np.asarray(self._value(op.theta, feeds))
                if op.half_only and raw.dtype in (np.float32, np.float64):
                    continue  # onnxruntime's kernel computes it with the rest of the region
                op_theta = raw.astype(np.float64)
                if op_theta.ndim != 3 or op_theta.shape[1] != len(spatial) or min(spatial, default=1) < 0:
                    raise DoesNotRun(f"{op.node.label}: theta {op_theta.shape} does not fit size {spatial}")
                if op.half_only and sizes.get(i, [op_theta.shape[0]])[0] != op_theta.shape[0]:
                    raise DoesNotRun(f"{op.node.label}: size N {sizes[i][0]} is not theta's {op_theta.shape[0]}")
                with np.errstate(invalid="ignore"):
                    grid = affine_grid(op_theta, spatial, bool(op.align_corners), op.size_one)
                # every known grid op's output has theta's type: a declared type may be stale (the
                # plan refuses a declaration the computed grid contradicts)
                out = raw.dtype if raw.dtype.kind == "f" else self.dtype
                feeds[op.node.outputs[0]] = grid.astype(out)
        return feeds, sizes

    def share_session_with_proof(self, feeds: dict, values: dict) -> None:
        """Ask for every value the region computes on each run, as the proof did: one session for
        both (worth it for small regions; a run then copies every intermediate out). The proof's
        own run is kept: the first check asks for it again."""
        self.everything = [o for n in self.cut.nodes for o in n.outputs if o]
        if self.cut.output in values:
            self.values_seen = {self.cut.output: (feeds, np.asarray(values[self.cut.output]))}

    def run(self, assign: dict[int, int], theta: np.ndarray | None) -> Run:
        feeds, sizes = self.inputs(assign, theta)
        with _probe_failure():
            everything = [o for o in self.everything if o not in feeds]
            if self.cut.output in self.values_seen:  # the proof's own run: the same feeds
                seen_feeds, seen_grid = self.values_seen[self.cut.output]
                if seen_feeds.keys() == feeds.keys() and all(np.array_equal(seen_feeds[k], feeds[k]) for k in feeds):
                    return Run(seen_grid, sizes)
            if self.cut.output in everything:
                grid = np.asarray(self.ctx.evaluate(everything, feeds)[everything.index(self.cut.output)])
            else:
                grid = np.asarray(self._value(self.cut.output, feeds))
        return Run(grid, sizes)
