"""Step 3, identify: which affine grid is the proved region, exactly? Probes find its coefficients.

The proof (``prove.py``, at the first dims the region runs at) has settled that the grid is
affine in theta; an affine function is fixed by its values at k+1 points, so the probes here
identify, they no longer decide. The region runs on probe thetas that span the space
(``surgeon.recognise.matrices``) at dims that all differ; every run must equal
``affine_grid(theta, size, align_corners)`` for one ``align_corners`` (theta: the fed one, an
affine map of it, or one fitted to a grid that reads no theta), a size-1 dim at torch's 0 or at
-1 or +1 (which the rewrite reproduces). The engine's ``Identification`` drives it and concludes
the dims (``surgeon.recognise.conclude``).

Decides: a ``Verdict`` (align_corners, the map or fitted theta, which output dims follow which
input dims, size-1 coordinates, theta's batch), or a ``Refusal``.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper

from surgeon import MatchContext, Refusal
from surgeon.recognise import (KIND_COUNT, AffineMap, DoesNotRun, Failure, Fed, Fitted, Identification, Mapped,
                               NotProved, Outcome, Region, Setting, Static, Symbols, collapsed, conclude,
                               map_from_probes, measure, precision, probe_matrices)

from .cut import theta_layout
from .exact_grid import exact_refusal
from .grid_ops import GridRunner
from .prove import prove_grid, unread
from .verdict import Verdict, stale_grid_type
from .verify import GRID_TOLERANCES, TOLERANCES, Agreement, compare, fit_items

MAP_SALT = 101  # probe thetas that fit a map are not the ones that then check it
# A constant grid's fit: rounding steps of its type it may be off by. Real exports' constant grids
# fit within 0.85 of a float32 step (188 fits over the corpus, shipped samples and tests); an
# int32 fixed point at 2^-20 (up to 8 steps off) moves outputs by 8e-5 and is no affine grid.
FIXED_ULPS = 4
MODES = ("plain", "fixed", "map")  # theta as fed; no theta (a fitted one); an affine map of theta


class Identifier(Identification):
    """One grid's identification (the engine's ``Identification``): how the region is fed
    (``source``), the align_corners settings still possible, the precision it is judged at."""

    noun, anchor_noun, holds = "grid", "image", "the grid is affine"

    def __init__(self, ctx: MatchContext, cut: Region, symbols: Symbols, prefer_ac: int, mode: str = "plain"):
        self.mode = mode
        self.acs = (prefer_ac, 1 - prefer_ac)  # align_corners settings still possible
        grid_elem = ctx.dtype(cut.output)
        theta_elem = ctx.dtype(cut.variable) if cut.variable else None
        self.precision = precision(ctx, cut.nodes, cut.constants, [grid_elem, theta_elem])
        self.tol = TOLERANCES[self.precision]  # fits of theta and maps
        self.grid_tol = GRID_TOLERANCES[self.precision]  # a grid against affine_grid (rounding)
        elem = theta_elem or grid_elem or TensorProto.FLOAT
        super().__init__(ctx, cut, symbols, GridRunner(ctx, cut, symbols, helper.tensor_dtype_to_np_dtype(elem)))
        self.layout = theta_layout(symbols.owners[cut.variable]) if cut.variable and mode != "fixed" else None
        self.k = self.layout.k if self.layout else None
        self.source = Fed(self._probe(), self._rows()) if self.layout else None

    # The source holds these, not the identifier: a bound method would make a cycle that keeps
    # the context (and its model) alive until the garbage collector runs.
    def _probe(self):
        layout, fixed = self.layout, self.cut.fixed
        return lambda count, start, salt: probe_matrices(count, layout.rows, layout.cols, layout.k, start, salt, fixed)

    def _rows(self):
        """The affine rows a fed theta holds (a homogeneous matrix's last row is not one)."""
        layout = self.layout
        return lambda thetas: thetas.reshape(thetas.shape[0], layout.rows, layout.cols)[:, :layout.k, :]

    def _mapped(self, theta_map: AffineMap, scaling=None) -> Mapped:
        return Mapped(self._probe(), (self.k, self.k + 1), theta_map, scaling)

    # -- one check -----------------------------------------------------------------------------

    def theta_count(self, assign: dict) -> int:
        return self.symbols.concrete(self.cut.variable, assign)[0] if self.source.fed else 0

    def check(self, assign: dict, acs, salt: int = 0, runs: int = 1, nan_free: bool = False) -> Outcome | Failure:
        """Run the region ``runs`` times at these dims; every run must agree on one setting.
        ``nan_free``: NaN coordinates are undefined in the original (``verify.compare``)."""
        agreement = None
        count = self.theta_count(assign)
        for r in range(runs):
            start = (3 * salt + r * count) % KIND_COUNT  # which spanning kinds this run gets
            thetas, labels = self.source.values(count, start, salt) if self.source.fed else (None, None)
            try:
                run = self.runner.run(assign, thetas)
            except DoesNotRun as exc:
                return Failure(f"the region does not run on probe dims: {exc}", ran=False)
            grid = run.output
            if grid.ndim != self.k + 2 or grid.shape[-1] != self.k or not np.issubdtype(grid.dtype, np.floating):
                return Failure(f"the grid has shape {list(grid.shape)} and type {grid.dtype}, not "
                               f"[N, {'D, ' if self.k == 3 else ''}H, W, {self.k}] floats", ran=True)
            stale = stale_grid_type(self.ctx.dtype(self.cut.output), grid.dtype)
            if stale:
                return Failure(stale, ran=True)
            expected = self.source.expected(thetas, assign)
            if expected.shape[0] not in (1, grid.shape[0]):
                return Failure(f"the grid's batch {grid.shape[0]} is neither theta's ({expected.shape[0]}) "
                               "nor a broadcast of it", ran=True, batch=grid.shape[0])
            result = compare(grid, expected, acs, self.grid_tol, nan_free)
            if not isinstance(result, Agreement):
                what = {"plain": "affine_grid(theta)", "map": "affine_grid of an affine map of theta",
                        "fixed": "affine_grid of the fitted theta"}[self.mode]
                settings = " or ".join(map(str, acs))
                return Failure(f"the grid is not {what} for align_corners {settings}: {result.describe(labels)}",
                               ran=True, nonfinite=bool(np.isnan(result.error)), batch=grid.shape[0])
            if agreement is not None and result != agreement:
                return Failure("the grid's size-1 convention changes between probe thetas", ran=True)
            agreement, acs = result, (result.align_corners,)
        return Outcome(grid.shape, agreement.align_corners, agreement.size_one, run.sizes, assign, grid.dtype)

    # -- the first dims that run: prove there, then identify -------------------------------------

    def _fed(self) -> bool:
        return self.mode != "fixed" and self.source is not None and self.source.fed

    def fed(self, assign: dict) -> np.ndarray | None:
        return self.source.values(self.theta_count(assign), 0, 0)[0] if self._fed() else None

    def prove(self, feeds: dict, values: dict, bounds=None):
        extra = {} if bounds is None else {"bounds": bounds}
        return prove_grid(self.ctx, self.cut, self.symbols, feeds, not self._fed(), self.dims.group_of, values, **extra)

    def proved(self, proof) -> None:
        if self._fed() and self.mode == "plain":
            missing = unread(proof.reads, self.layout.rows, self.layout.cols, self.layout.k)
            if missing:
                raise NotProved(f"the grid never reads theta element{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(map(str, missing))}, which the op reads: a non-finite value there would "
                                "reach the rewrite's output only")

    def first(self, base: dict) -> Outcome | Failure:
        """After the proof: the first identification (a map or a fitted theta when the mode
        asks), checked on every spanning probe theta."""
        if self.mode == "fixed":
            fitted = self._fit_fixed(base)
            if isinstance(fitted, Failure):
                return fitted
        elif self.mode == "map":
            if not self._find_map(base):
                return Failure("no affine map of theta gives this grid", ran=True)
            if not np.any(self.source.affine.weight):  # e.g. Clip(theta, 0, 0): 0 * theta is NaN at inf
                return Failure("the grid reads theta but no value of it changes the grid: a rewrite reading "
                               "theta differs wherever theta is not finite", ran=True)
        count = self.theta_count(base)
        runs = math.ceil(KIND_COUNT / count) if self.source.fed and count else 1
        return self.check(base, self.acs, 0, runs)

    def _fit_fixed(self, base: dict) -> Failure | None:
        """A grid with no theta: fit one theta per item (exactly, or the grid is not affine)."""
        try:
            grid = self.runner.run(base, None).output
        except DoesNotRun as exc:
            return Failure(f"the grid cannot be computed on probe dims: {exc}", ran=False)
        k = grid.shape[-1] if grid.ndim in (4, 5) else 0
        if k != grid.ndim - 2 or not np.issubdtype(grid.dtype, np.floating) or grid.size == 0:  # nothing to fit
            return Failure(f"a value of shape {list(grid.shape)} is not a grid", ran=True)
        self.k = k
        if self.precision in ("single", "double"):
            # A grid of constants and sizes has no probe theta to scale an error: held to a few
            # rounding steps of its own type (a grid quantised to 2^-16 is not an affine one), and
            # of float32 at most: the rewrite computes in float32, so a double grid holding
            # float32's precision (MONAI's, affine to 5.5e-8) is the one it writes.
            eps = float(np.finfo(np.float32 if grid.dtype == np.float64 else grid.dtype).eps)
            self.tol = self.grid_tol = (FIXED_ULPS * eps * max(1.0, float(np.abs(grid).max())), FIXED_ULPS * eps)
        for ac in self.acs:
            theta = fit_items(grid, ac, self.tol)
            if theta is None:
                continue
            self.source = Fitted(collapsed(theta, self.tol))
            self.acs = (ac,)
            return None
        return Failure("the grid reads no theta and is not affine_grid(theta) for any theta", ran=True)

    def _find_map(self, base: dict) -> bool:
        """Whether the grid is affine_grid(A(theta)) for one affine map A of theta's
        coefficients, fitted over more probe thetas than it has unknowns."""
        for ac in self.acs:
            found = self._fit_map(base, ac)
            if found is not None:
                self.source, self.acs = self._mapped(found), (ac,)
                return True
        return False

    def _fit_map(self, base: dict, ac: int) -> AffineMap | None:
        needed = self.layout.rows * self.layout.cols + 4
        count = self.theta_count(base)
        runs = []
        for r in range(math.ceil(needed / max(count, 1))):
            thetas, _ = self.source.values(count, r * count, MAP_SALT + r)
            try:
                grid = self.runner.run(base, thetas).output
            except DoesNotRun:
                return None
            if grid.ndim != self.k + 2 or grid.shape[-1] != self.k or (grid.shape[0] != count and count != 1):
                return None
            runs.append((grid, thetas))
        return map_from_probes(runs, lambda grid: fit_items(grid, ac, self.tol), self.tol)

    # -- coefficients that follow the dims (surgeon.recognise.scaling)----------------------------------------

    def _coefficients_at(self, assign: dict, ac: int) -> np.ndarray | None:
        """The fitted theta's (or map's) coefficients at these dims, flat, or None."""
        if self.mode == "map":
            found = self._fit_map(assign, ac)
            return None if found is None else found.coefficients()
        try:
            grid = self.runner.run(assign, None).output
        except DoesNotRun:
            return None
        theta = fit_items(grid, ac, self.tol) if grid.ndim == self.k + 2 and grid.shape[-1] == self.k else None
        if theta is None:
            return None
        theta = collapsed(theta, self.tol)
        return theta.reshape(-1) if theta.shape == self.source.params.shape else None

    def concluded(self, base: dict, outcome: Outcome) -> Verdict | Refusal:
        ac = outcome.setting
        if self.mode != "plain" and self.source.scaling is None:  # the fitted theta or map may follow the dims
            found = measure(lambda assign: self._coefficients_at(assign, ac), self.dims, base, self.tol[1])
            if found is not None and self.mode == "map":
                self.source = self._mapped(self.source.affine, found)
            elif found is not None:
                self.source = Fitted(self.source.params, found)
        verdict = Verdict(k=self.k, homogeneous=bool(self.layout and self.layout.homogeneous), align_corners=ac,
                          precision=self.precision, grid_dtype=outcome.dtype, size_one=dict(outcome.size_one),
                          theta_map=self.source.affine if isinstance(self.source, Mapped) else None,
                          theta_value=self.source.params if self.mode == "fixed" else None,
                          reads=self.proof.reads if self.proof else 0)
        setting = Setting(self.ctx, self.symbols, self.dims, proof=self.proof, noun="grid",
                          check=lambda a, salt, nan_free=False: self.check(a, (ac,), salt=salt, nan_free=nan_free),
                          variable=None if self.mode == "fixed" else self.cut.variable,
                          varied_noun="theta's transformation in the grid" if self.mode == "map" else "the grid",
                          nan_note="the original's grid is NaN (0/0 in its coordinates), which engines sample as they "
                                   "happen to; the rewrite samples at affine_grid's coordinates there",
                          not_finite="the original's grid is not finite and its finite coordinates are not "
                                     "affine_grid(theta)")
        refusal = conclude(setting, base, outcome, verdict)
        if refusal:
            return refusal
        if self.mode == "fixed":
            verdict.variable_batch = Static(self.source.params.shape[0])
        failed = self.all_varied(base, ac) if self.mode != "plain" and self.source.scaling is not None else None
        if failed is not None:
            return Refusal(f"the grid's coefficients follow the dims, but not as one power of each: {failed.reason}")
        verdict.theta_scaling = self.source.scaling
        values = self.proof.values if self.proof is not None else {}
        return exact_refusal(self.ctx, self.cut, self.symbols, self.dims, values, verdict, self.layout) or verdict

