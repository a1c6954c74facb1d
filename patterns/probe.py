"""Decide by evaluation what a traced region computes.

The region runs in onnxruntime (``ctx.evaluate``) on a random theta and concrete dims; known
grid ops are fed their analytic value. It is an affine grid when its output equals
``affine_grid(theta, size, align_corners)`` for one ``align_corners``. Varying one dim class at a
time tells which output dims follow which input dim; a class the region only accepts at one
value (sizes baked into constants, as dynamo's ``Dim.AUTO`` export does) is pinned there.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto, helper

from surgeon import MatchContext, SurgeonError

from .analytic import ONNX, TORCH, affine_grid
from .reparam import ThetaMap, fit_items, fit_map, tolerance
from .symbols import Symbols
from .trace import Trace, theta_layout

BATCH, BATCH_ALT = 2, 3
BASE_VALUES = (5, 7, 6, 9, 4, 10, 11, 13)
ALT_STEP = 3
MAX_SEARCH = 256  # dim combinations tried when the base dims do not run
SEED = 20240611


class ProbeFailed(Exception):
    pass


@dataclass
class Verdict:
    reason: str | None = None
    k: int = 2
    homogeneous: bool = False
    align_corners: int = 0
    convention: str = TORCH  # what the region does for size-1 dims with align_corners=1
    batch: tuple = ("static", 1)  # grid batch: ("static", n) or ("class", index)
    spatial: list = field(default_factory=list)  # per output dim, as batch
    theta_batch: tuple = ("static", 1)
    pinned: dict = field(default_factory=dict)  # class -> the only value the original accepts
    size_one: str | None = None  # align_corners=1 and dynamic dims: "torch", "onnx" or "unchecked"
    size_from: int | None = None  # index of the known grid op whose size tensor gives computed dims
    theta_map: ThetaMap | None = None  # the grid is affine_grid(map(theta)), not affine_grid(theta)


@dataclass
class Failure:
    reason: str
    ran: bool  # the region ran, its grid did not verify


@dataclass
class Outcome:
    grid: np.ndarray
    align_corners: int
    convention: str
    sizes: dict  # known grid op index -> its evaluated size tensor


class Prober:
    def __init__(self, ctx: MatchContext, trace: Trace, symbols: Symbols, prefer_ac: int, allow_map: bool = False):
        self.ctx, self.trace, self.symbols, self.prefer_ac = ctx, trace, symbols, prefer_ac
        self.allow_map = allow_map
        self.layout = theta_layout(symbols.owners[trace.theta].dims)
        self.k, self.homogeneous = self.layout.k, self.layout.homogeneous
        elem = ctx.dtype(trace.theta) or TensorProto.FLOAT
        self.dtype = helper.tensor_dtype_to_np_dtype(elem)
        self.theta_map: ThetaMap | None = None

    # -- one evaluation ------------------------------------------------------------------------

    def _theta(self, dims: list[int], salt: int = 0) -> np.ndarray:
        rows, cols = self.layout.rows, self.layout.cols
        rng = np.random.default_rng([SEED, salt, *dims])
        theta = rng.uniform(-0.6, 0.6, size=(dims[0], rows, cols))
        theta[:, np.arange(self.k), np.arange(self.k)] += 1.0  # near identity: a sensible warp
        return theta.reshape(dims).astype(self.dtype)

    def _value(self, name: str, feeds: dict) -> np.ndarray:
        if name in feeds:
            return feeds[name]
        constant = self.ctx.constant(name)
        if constant is not None:
            return constant
        return self.ctx.evaluate([name], feeds)[0]

    def run(self, assign: dict[int, int], salt: int = 0) -> tuple[np.ndarray, np.ndarray, dict]:
        sym = self.symbols
        theta = self._theta(sym.concrete(self.trace.theta, assign), salt)
        feeds = {self.trace.theta: theta}
        for leaf in self.trace.shape_leaves:
            dims = sym.concrete(leaf.inputs[0], assign)
            if leaf.op_type == "Size":
                feeds[leaf.outputs[0]] = np.array(int(np.prod(dims)), dtype=np.int64)
                continue
            rank = len(dims)
            start, end = leaf.attr("start", 0), leaf.attr("end", rank)
            start, end = (start + rank if start < 0 else start), (end + rank if end < 0 else end)
            feeds[leaf.outputs[0]] = np.array(dims[max(0, start):max(0, min(end, rank))], dtype=np.int64)
        sizes = {}
        try:
            for i, op in enumerate(self.trace.known):
                op_theta = np.asarray(self._value(op.theta, feeds), dtype=np.float64)
                if op.size is not None:
                    sizes[i] = [int(s) for s in np.asarray(self._value(op.size, feeds)).reshape(-1)]
                    spatial = sizes[i][2:]
                else:
                    spatial = list(op.output_size)
                if op_theta.ndim != 3 or op_theta.shape[1] != len(spatial):
                    raise ProbeFailed(f"{op.node.label}: theta {op_theta.shape} does not fit size {spatial}")
                grid = affine_grid(op_theta, spatial, bool(op.align_corners), op.convention)
                feeds[op.node.outputs[0]] = grid.astype(op_theta.dtype if op_theta.dtype != np.float64 else self.dtype)
            grid = np.asarray(self._value(self.trace.grid, feeds))
        except SurgeonError as exc:
            raise ProbeFailed(str(exc)) from None
        except (ValueError, IndexError, TypeError) as exc:  # a size that makes no sense
            raise ProbeFailed(f"{type(exc).__name__}: {exc}") from None
        return grid, theta, sizes

    def _effective(self, theta: np.ndarray) -> np.ndarray:
        """The [N, k, k+1] matrices the grid should be an affine grid of."""
        if self.theta_map is not None:
            return self.theta_map.apply(theta, self.k)
        return theta.reshape(theta.shape[0], self.layout.rows, self.layout.cols)[:, :self.k, :]

    def verify(self, grid: np.ndarray, theta: np.ndarray, acs) -> tuple[int, str] | str:
        """(align_corners, convention) the grid matches, or why it does not."""
        k = self.k
        if grid.ndim != k + 2 or grid.shape[-1] != k:
            return f"the grid has shape {list(grid.shape)}, not [N, {'D, ' if k == 3 else ''}H, W, {k}]"
        if not np.issubdtype(grid.dtype, np.floating):
            return f"the grid is of type {grid.dtype}"
        batch, spatial = grid.shape[0], grid.shape[1:-1]
        th = self._effective(theta)
        if th.shape[0] != batch:
            if th.shape[0] != 1:
                return f"the grid's batch {batch} is neither theta's ({th.shape[0]}) nor a broadcast of it"
            th = np.broadcast_to(th, (batch, *th.shape[1:]))
        atol, rtol = tolerance(grid.dtype)
        worst = np.inf
        for ac in acs:
            for convention in (TORCH, ONNX):
                if convention == ONNX and not (ac and 1 in spatial):
                    continue
                expected = affine_grid(th, spatial, bool(ac), convention)
                err = np.abs(grid.astype(np.float64) - expected)
                if np.all(err <= atol + rtol * np.abs(expected)):
                    return ac, convention
                worst = min(worst, float(np.nanmax(err)) if err.size else 0.0)
        return f"the grid is not affine_grid(theta) for align_corners 0 or 1 (max error {worst:.3g})"

    def attempt(self, assign: dict[int, int], acs) -> Outcome | Failure:
        try:
            grid, theta, sizes = self.run(assign)
        except ProbeFailed as exc:
            return Failure(f"the region does not run on probe dims: {exc}", ran=False)
        result = self.verify(grid, theta, acs)
        return Failure(result, ran=True) if isinstance(result, str) else Outcome(grid, *result, sizes)

    # -- the whole probe ---------------------------------------------------------------------

    def probe(self) -> Verdict:
        sym = self.symbols
        classes = range(len(sym.classes))
        base = {}
        for c in classes:
            base[c] = BATCH if c == sym.batch_class else BASE_VALUES[len(base) % len(BASE_VALUES)]
        acs = (self.prefer_ac, 1 - self.prefer_ac)
        first = self.attempt(base, acs)
        if isinstance(first, Failure) and first.ran and self.allow_map and self._find_map(base, acs):
            first = self.attempt(base, acs)
        if isinstance(first, Failure):
            found = self._search(base, acs)
            if found is None:
                return Verdict(reason=first.reason)
            base, first = found
        ac = first.align_corners
        verdict = Verdict(k=self.k, homogeneous=self.homogeneous, align_corners=ac, convention=first.convention,
                          theta_map=self.theta_map)
        follows: dict[int, int] = {}  # output axis -> class
        computed: set[int] = set()  # output axes that change with a class but are not copies of it
        outcomes = [first]
        for c in classes:
            varied = dict(base)
            varied[c] = BATCH_ALT if c == sym.batch_class else base[c] + ALT_STEP
            other = self.attempt(varied, (ac,))
            if isinstance(other, Failure) and other.ran and self.theta_map is not None:
                return Verdict(reason=f"theta's transformation in the grid depends on {sym.name(c)}")
            if isinstance(other, Failure) or other.align_corners != ac:
                verdict.pinned[c] = base[c]
                continue
            outcomes.append(other)
            for axis, (a, b) in enumerate(zip(first.grid.shape[:-1], other.grid.shape[:-1])):
                if a == b:
                    continue
                if a != base[c] or b != varied[c] or axis in follows:
                    computed.add(axis)
                else:
                    follows[axis] = c
        dims = [("computed",) if a in computed else ("class", follows[a]) if a in follows else ("static", int(n))
                for a, n in enumerate(first.grid.shape[:-1])]
        if computed:
            verdict.size_from = self._size_source(outcomes)
            if 0 in computed or verdict.size_from is None:
                return Verdict(reason=f"output dims {sorted(computed)} are computed from input dims, not copied")
        verdict.batch, verdict.spatial = dims[0], dims[1:]
        theta_dim = sym.owners[self.trace.theta].dims[0]
        verdict.theta_batch = ("static", theta_dim) if isinstance(theta_dim, int) else (
            ("static", base[theta_dim[1]]) if theta_dim[1] in verdict.pinned else theta_dim)
        if ac == 1:
            verdict.size_one = self._size_one(base, [d[1] for d in verdict.spatial if d[0] == "class"])
        return verdict

    def _find_map(self, base: dict, acs) -> bool:
        """Whether the grid is affine_grid(A(theta)) for one affine map A of theta's
        coefficients (then kept for the rest of the probe and the rewrite)."""
        needed = self.layout.rows * self.layout.cols + 4  # more samples than unknowns: a check
        runs, items = [], 0
        for salt in range(1, needed + 1):
            try:
                grid, theta, _ = self.run(base, salt)
            except ProbeFailed:
                return False
            if grid.ndim != self.k + 2 or grid.shape[-1] != self.k or theta.shape[0] not in (1, grid.shape[0]):
                return False
            runs.append((grid, theta))
            items += theta.shape[0]
            if items >= needed:
                break
        spatial = runs[0][0].shape[1:-1]
        for ac in acs:
            for convention in (TORCH, ONNX):
                if convention == ONNX and not (ac and 1 in spatial):
                    continue
                thetas, targets = [], []
                for grid, theta in runs:
                    fitted = fit_items(grid, ac, convention)
                    if fitted is None or not np.allclose(fitted, fitted[: theta.shape[0]].repeat(
                            grid.shape[0] // theta.shape[0], axis=0), atol=1e-5):
                        break
                    thetas += list(theta.reshape(theta.shape[0], -1))
                    targets += list(fitted[: theta.shape[0]].reshape(theta.shape[0], -1))
                else:
                    found = fit_map(np.array(thetas, np.float64), np.array(targets))
                    if found is not None:
                        self.theta_map = found
                        return True
        return False

    def _size_source(self, outcomes: list[Outcome]) -> int | None:
        """A grid op whose size tensor held the output's spatial dims in every run: the rewrite
        reads that tensor when the dims are computed rather than copied."""
        for i in outcomes[0].sizes:
            if all(o.sizes.get(i, [])[2:] == list(o.grid.shape[1:-1]) for o in outcomes):
                return i
        return None

    def _search(self, base: dict, acs):
        """Dims the region accepts when the base ones fail: sizes found in its constants first
        (arange lengths), then their divisors (a flattened H*W base grid)."""
        sym = self.symbols
        free = [c for c in base if c != sym.batch_class]
        if not free:
            return None
        per_class = max(2, int(MAX_SEARCH ** (1 / len(free))))
        values = self._size_hints()[:per_class]
        for combo in itertools.islice(itertools.product(values, repeat=len(free)), MAX_SEARCH):
            assign = dict(base)
            assign.update(zip(free, combo))
            result = self.attempt(assign, acs)
            if isinstance(result, Outcome):
                return assign, result
        return None

    def _size_hints(self) -> list[int]:
        found: set[int] = set()
        arrays = [self.ctx.constant(name) for name in self.trace.constants]
        arrays += [n.attr("value") for n in self.trace.nodes if n.is_op("Constant")]
        for value in arrays:
            if not isinstance(value, np.ndarray):
                continue
            found.update(int(d) for d in value.shape if 2 <= d <= 4096)
            if value.dtype.kind in "iu" and value.size <= 8:
                found.update(int(v) for v in value.reshape(-1) if 2 <= v <= 4096)
        found.update(d for d in self.ctx.shape(self.trace.grid) or () if isinstance(d, int) and 2 <= d <= 4096)
        divisors = {d for n in found for d in range(2, n) if n % d == 0} - found
        return sorted(found) + sorted(divisors)

    def _size_one(self, base: dict, classes: list[int]) -> str | None:
        """With align_corners=1, what the region does when a dynamic output dim is 1."""
        if not classes:
            return None
        ones = dict(base)
        ones.update({c: 1 for c in classes})
        result = self.attempt(ones, (1,))
        return "unchecked" if isinstance(result, Failure) else result.convention
