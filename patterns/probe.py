"""Decide by evaluation what a traced region computes.

The region runs in onnxruntime on probe thetas that span the space (``thetas.py``) and on
concrete dims that all differ. It is an affine grid when every run equals
``affine_grid(theta, size, align_corners)`` for one ``align_corners`` (theta: the fed one, an
affine map of it, or one fitted to a grid that reads no theta). Then each dim class is varied
alone (which output dims follow it), set to 1 (a size-1 coordinate of torch's 0, or of -1 or +1
which the rewrite reproduces; anything else is refused), and theta's batch is set to 1 (does the
region broadcast it). A class the region only accepts at one value (sizes baked into constants)
is pinned there. Dims are never linked by name: only when the region does not run with every dim
distinct are classes tied (theta's batch to the image's, then equal declared symbols), and each
tie is kept only if splitting it fails.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from onnx import TensorProto, helper

from surgeon import MatchContext

from .conclude import Conclusions
from .evaluate import ProbeFailed, Region
from .prove_grid import DoesNotRun, GridProof, prove_grid, unread
from .reparam import fit_items, fit_map
from .sources import FixedSource, MapSource, PlainSource
from .symbols import Symbols
from .thetas import KIND_COUNT
from .ties import Ties
from .trace import Trace, theta_layout
from .verdict import Failure, Outcome, Verdict, stale_grid_type
from .verify import TOLERANCES, Agreement, compare, precision

BATCH_POOL = (2, 3, 4, 5, 6, 7, 8)
SPATIAL_POOL = (5, 7, 6, 9, 11, 13, 10, 14, 8, 12, 15, 17, 19, 16, 18, 20, 21, 22, 23, 25)
MAP_SALT = 101  # probe thetas that fit a map are not the ones that then check it

__all__ = ["Prober", "Verdict"]


class Refused(Exception):
    """The proof says no: no other dims or strategy can change that."""


class Prober(Ties, Conclusions):
    def __init__(self, ctx: MatchContext, trace: Trace, symbols: Symbols, prefer_ac: int, mode: str = "plain"):
        """``mode``: "plain" (theta as fed), "map" (an affine map of it), "fixed" (no theta)."""
        self.ctx, self.trace, self.symbols, self.mode = ctx, trace, symbols, mode
        self.acs = (prefer_ac, 1 - prefer_ac)
        grid_elem = ctx.dtype(trace.grid)
        theta_elem = ctx.dtype(trace.theta) if trace.theta else None
        self.precision = precision(ctx, trace, [grid_elem, theta_elem])
        self.tol = TOLERANCES[self.precision]
        elem = theta_elem or grid_elem or TensorProto.FLOAT
        self.region = Region(ctx, trace, symbols, helper.tensor_dtype_to_np_dtype(elem))
        self.layout = theta_layout(symbols.owners[trace.theta]) if trace.theta and mode != "fixed" else None
        self.k = self.layout.k if self.layout else None
        self.source = PlainSource(self.layout) if self.layout else None
        self.groups: list[list[int]] = [[c] for c in range(len(symbols.classes))]
        self.fixed: dict[int, int] = {}  # class -> a value it must take (theta's batch = a static image batch)
        batch = {symbols.batch_class, symbols.theta_batch_class} - {None}
        self.batch_like = batch
        self.static = {d for dims in symbols.owners.values() for d in dims if isinstance(d, int)}
        self.proof: GridProof | None = None  # proved once, at the first dims the region runs at

    # -- assignments ---------------------------------------------------------------------------

    def _group_of(self, cls: int) -> int:
        return next(i for i, g in enumerate(self.groups) if cls in g)

    def _pool(self, group: int):
        return BATCH_POOL if set(self.groups[group]) & self.batch_like else SPATIAL_POOL

    def _fresh(self, group: int, used: set) -> int:
        pool = itertools.chain(self._pool(group), itertools.count(26))
        return next(v for v in pool if v not in used and v not in self.static)

    def _base(self) -> dict[int, int]:
        used: set = set()
        values = {}
        for g, members in enumerate(self.groups):
            fixed = [self.fixed[c] for c in members if c in self.fixed]
            values[g] = fixed[0] if fixed else self._fresh(g, used)
            used.add(values[g])
        return self._assign(values)

    def _assign(self, values: dict[int, int]) -> dict[int, int]:
        return {c: values[g] for g, members in enumerate(self.groups) for c in members}

    def _with(self, base: dict, group: int, value: int) -> dict[int, int]:
        out = dict(base)
        out.update({c: value for c in self.groups[group]})
        return out

    def _rep(self, group: int) -> int:
        """The class that stands for a group: the image's dims first (its Shape is read anyway)."""
        members = self.groups[group]
        image = [c for c in members if self.symbols.classes[c].value == self.symbols.image]
        return (image or sorted(members, key=lambda c: self.symbols.classes[c].kind != "shape"))[0]

    # -- one check -----------------------------------------------------------------------------

    def _theta_count(self, assign: dict) -> int:
        return self.symbols.concrete(self.trace.theta, assign)[0] if self.source.fed else 0

    def check(self, assign: dict, acs, salt: int = 0, runs: int = 1) -> Outcome | Failure:
        """Run the region ``runs`` times at these dims; every run must agree on one setting."""
        agreement = None
        count = self._theta_count(assign)
        for r in range(runs):
            start = (3 * salt + r * count) % KIND_COUNT  # which spanning kinds this run gets
            thetas, labels = self.source.thetas(count, start, salt) if self.source.fed else (None, None)
            try:
                run = self.region.run(assign, thetas)
            except ProbeFailed as exc:
                return Failure(f"the region does not run on probe dims: {exc}", ran=False)
            grid = run.grid
            if grid.ndim != self.k + 2 or grid.shape[-1] != self.k or not np.issubdtype(grid.dtype, np.floating):
                return Failure(f"the grid has shape {list(grid.shape)} and type {grid.dtype}, not "
                               f"[N, {'D, ' if self.k == 3 else ''}H, W, {self.k}] floats", ran=True)
            self.grid_dtype = grid.dtype
            stale = stale_grid_type(self.ctx.dtype(self.trace.grid), grid.dtype)
            if stale:
                return Failure(stale, ran=True)
            expected = self.source.expected(thetas)
            if expected.shape[0] not in (1, grid.shape[0]):
                return Failure(f"the grid's batch {grid.shape[0]} is neither theta's ({expected.shape[0]}) "
                               "nor a broadcast of it", ran=True, grid_batch=grid.shape[0])
            result = compare(grid, expected, acs, self.tol)
            if not isinstance(result, Agreement):
                what = {"plain": "affine_grid(theta)", "map": "affine_grid of an affine map of theta",
                        "fixed": "affine_grid of the fitted theta"}[self.mode]
                settings = " or ".join(map(str, acs))
                return Failure(f"the grid is not {what} for align_corners {settings}: {result.describe(labels)}",
                               ran=True, nonfinite=bool(np.isnan(result.error)), grid_batch=grid.shape[0])
            if agreement is not None and result != agreement:
                return Failure("the grid's size-1 convention changes between probe thetas", ran=True)
            agreement, acs = result, (result.align_corners,)
        return Outcome(grid.shape, agreement, run.sizes, assign)

    # -- the start: a first setting that verifies --------------------------------------------------

    def _prove(self, base: dict) -> Failure | None:
        """Prove the region at the first dims it runs at; a refusal ends the probe (Refused)."""
        if self.proof is not None:
            return None
        fed = self.mode != "fixed" and self.source is not None and self.source.fed
        thetas = self.source.thetas(self._theta_count(base), 0, 0)[0] if fed else None
        try:
            feeds, _ = self.region.inputs(base, thetas)
            grid = self.region.run(base, thetas).grid
        except ProbeFailed as exc:
            return Failure(f"the region does not run on probe dims: {exc}", ran=False)
        image_batch = self.symbols.concrete(self.symbols.image, base)[0]
        if grid.ndim and grid.shape[0] != image_batch:  # the sampler would refuse these dims: not the model's
            return Failure(f"the grid's batch {grid.shape[0]} is not the image's ({image_batch}) at these dims",
                           ran=False, grid_batch=grid.shape[0])
        try:
            proof = prove_grid(self.ctx, self.trace, self.symbols, feeds, not fed, self._group_of)
        except DoesNotRun as exc:
            return Failure(f"the region does not run on probe dims: {exc}", ran=False)
        if isinstance(proof, str):
            raise Refused(proof)
        if fed and self.mode == "plain":
            missing = unread(proof.reads, self.layout.rows, self.layout.cols, self.layout.k)
            if missing:
                raise Refused(f"the grid never reads theta element{'s' if len(missing) > 1 else ''} "
                              f"{', '.join(map(str, missing))}, which the op reads: a non-finite value there would "
                              "reach the rewrite's output only")
        self.proof = proof
        return None

    def _start(self, base: dict) -> Outcome | Failure:
        unproved = self._prove(base)
        if unproved is not None:
            return unproved
        if self.mode == "fixed":
            fitted = self._fit_fixed(base)
            if isinstance(fitted, Failure):
                return fitted
        elif self.mode == "map":
            if not self._find_map(base):
                return Failure("no affine map of theta gives this grid", ran=True)
            if not np.any(self.source.theta_map.weight):  # e.g. Clip(theta, 0, 0): 0 * theta is NaN at inf
                return Failure("the grid reads theta but no value of it changes the grid: a rewrite reading "
                               "theta differs wherever theta is not finite", ran=True)
        count = self._theta_count(base)
        runs = math.ceil(KIND_COUNT / count) if self.source.fed and count else 1
        return self.check(base, self.acs, 0, runs)

    def _fit_fixed(self, base: dict) -> Failure | None:
        """A grid with no theta: fit one theta per item (exactly, or the grid is not affine)."""
        try:
            grid = self.region.run(base, None).grid
        except ProbeFailed as exc:
            return Failure(f"the grid cannot be computed on probe dims: {exc}", ran=False)
        k = grid.shape[-1] if grid.ndim in (4, 5) else 0
        if k != grid.ndim - 2 or not np.issubdtype(grid.dtype, np.floating) or grid.size == 0:  # nothing to fit
            return Failure(f"a value of shape {list(grid.shape)} is not a grid", ran=True)
        self.k = k
        for ac in self.acs:
            theta = fit_items(grid, ac, self.tol)
            if theta is None:
                continue
            atol, rtol = self.tol
            same = np.all(np.abs(theta - theta[:1]) <= atol + rtol * np.abs(theta[:1]))
            self.source = FixedSource(theta[:1] if same else theta)
            self.acs = (ac,)
            return None
        return Failure("the grid reads no theta and is not affine_grid(theta) for any theta", ran=True)

    def _find_map(self, base: dict) -> bool:
        """Whether the grid is affine_grid(A(theta)) for one affine map A of theta's
        coefficients, fitted over more probe thetas than it has unknowns."""
        needed = self.layout.rows * self.layout.cols + 4
        count = self._theta_count(base)
        runs = []
        for r in range(math.ceil(needed / max(count, 1))):
            thetas, _ = self.source.thetas(count, r * count, MAP_SALT + r)
            try:
                grid = self.region.run(base, thetas).grid
            except ProbeFailed:
                return False
            if grid.ndim != self.k + 2 or grid.shape[-1] != self.k or (grid.shape[0] != count and count != 1):
                return False
            runs.append((grid, thetas))
        for ac in self.acs:
            sources, targets = [], []
            for grid, thetas in runs:
                fitted = fit_items(grid, ac, self.tol)
                if fitted is None:
                    break
                if grid.shape[0] != thetas.shape[0]:  # one theta broadcast: every item the same
                    if not np.allclose(fitted, fitted[:1], atol=self.tol[0] * 10):
                        break
                    fitted = fitted[:1]
                sources += list(thetas.reshape(thetas.shape[0], -1))
                targets += list(fitted.reshape(fitted.shape[0], -1))
            else:
                found = fit_map(np.array(sources), np.array(targets), self.tol)
                if found is not None:
                    self.source, self.acs = MapSource(self.layout, found), (ac,)
                    return True
        return False

    # -- ties between dims, tried only when all-distinct dims do not run -------------------------

    def probe(self) -> Verdict:
        try:
            return self._probe()
        except Refused as exc:
            return Verdict(reason=str(exc))

    def _probe(self) -> Verdict:
        failures, found = [], None
        for groups, fixed in self._partitions():  # every partition gets its turn
            self.groups, self.fixed = [list(g) for g in groups], fixed
            base = self._base()
            result = self._start(base)
            if isinstance(result, Outcome):
                found = base, result
                break
            failures.append(result)
        if found is None and not any(f.ran for f in failures):
            found = self._search(self._base())
        if found is None:
            ran = [f for f in failures if f.ran]
            return Verdict(reason=(ran or failures)[0].reason)
        base, outcome = found
        ac = outcome.agreement.align_corners
        if any(len(g) > 1 for g in self.groups):
            base = self._split(base, ac)
            if isinstance(base, str):
                return Verdict(reason=base)
            outcome = self.check(base, (ac,), salt=0)
            if not isinstance(outcome, Outcome):
                return Verdict(reason=outcome.reason)
        return self._conclude(base, outcome, ac)

