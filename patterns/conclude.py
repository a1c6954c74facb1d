"""From a first verified setting to a verdict: which output dims follow which input dims (each
class varied alone), what the grid is at size 1, whether theta's batch broadcasts, where computed
dims come from."""

from __future__ import annotations

from .verdict import Failure, Outcome, Verdict


class Conclusions:
    def _conclude(self, base: dict, first: Outcome, ac: int) -> Verdict:
        sym = self.symbols
        verdict = Verdict(k=self.k, homogeneous=bool(self.layout and self.layout.homogeneous), align_corners=ac,
                          precision=self.precision, grid_dtype=getattr(self, "grid_dtype", None),
                          size_one=dict(first.agreement.size_one),
                          theta_map=getattr(self.source, "theta_map", None),
                          theta_value=self.source.theta if self.mode == "fixed" else None,
                          reads=self.proof.reads if self.proof else 0)
        follows: dict[int, int] = {}  # output axis -> group
        computed: set[int] = set()
        outcomes = [first]
        pinned_groups = set()
        for g in range(len(self.groups)):
            name = sym.name(self._rep(g))
            ran = False
            # A second, far value: H // 16 is 0 at every nearby value (the region fails there: not
            # a pinned size), and H // 2 is 3 at both 6 and 7 (a computed dim is not a static one).
            for value, salt in ((self._fresh(g, set(base.values())), g + 1), (self._far(base), g + 61)):
                varied = self._with(base, g, value)
                other = self.check(varied, (ac,), salt=salt)
                if isinstance(other, Failure) and not other.ran:
                    continue  # the original does not run there either
                if isinstance(other, Failure):
                    what = "theta's transformation in the grid" if self.mode == "map" else "the grid"
                    at = sym.name(self._rep(g), varied[self._rep(g)])
                    return Verdict(reason=f"{what} depends on {name}: at {at}, {other.reason}")
                if other.agreement.size_one != first.agreement.size_one:
                    return Verdict(reason=f"the grid's size-1 convention changes with {name}")
                ran = True
                outcomes.append(other)
                for axis, (a, b) in enumerate(zip(first.shape[:-1], other.shape[:-1])):
                    if a == b:
                        continue
                    if a != base[self._rep(g)] or b != varied[self._rep(g)] or follows.get(axis, g) != g:
                        computed.add(axis)
                    else:
                        follows[axis] = g
            if not ran:  # runs at one size only: sizes baked into constants
                pinned_groups.add(g)
                verdict.pinned[self._rep(g)] = base[self._rep(g)]
        dims = [("computed",) if a in computed else ("class", self._rep(follows[a])) if a in follows
                else ("static", int(n)) for a, n in enumerate(first.shape[:-1])]
        if computed:
            found = self._size_source(outcomes)
            if 0 in computed or found is None:
                return Verdict(reason=f"output dims {sorted(computed)} are computed from input dims, not copied")
            verdict.size_from, verdict.size_exact = found
        verdict.batch, verdict.spatial = dims[0], dims[1:]
        reason = self._size_one(base, ac, pinned_groups, verdict)
        if reason:
            return Verdict(reason=reason)
        verdict.theta_batch = self._theta_batch(base, pinned_groups)
        if self.mode == "fixed":
            verdict.theta_batch = ("static", self.source.theta.shape[0])
        elif verdict.theta_batch[0] == "class":
            verdict.broadcast_theta = self._broadcasts(base, ac, verdict.batch)
        return verdict

    def _far(self, base: dict) -> int:
        """A dim value far from the probe's (its multiples and divisors included)."""
        value = 4 * max(list(base.values()) + [8]) + 7
        while value in self.static or value in base.values():
            value += 1
        return value

    def _size_one(self, base: dict, ac: int, pinned: set, verdict: Verdict) -> str | None:
        """Every dynamic dim set to 1, one at a time: the grid must still be affine_grid(theta)
        with some size-1 coordinate (the rewrite reproduces it); where the original does not run
        at 1, nothing is lost."""
        moved = dict(verdict.size_one)
        for g in range(len(self.groups)):
            if g in pinned:
                continue
            name = self.symbols.name(self._rep(g), 1)
            result = self.check(self._with(base, g, 1), (ac,), salt=40 + g)
            if isinstance(result, Outcome):
                for axis, coordinate in result.agreement.size_one:
                    if moved.setdefault(axis, coordinate) != coordinate:
                        return f"the grid's size-1 coordinate along output dim {axis} is not one value"
            elif result.ran and result.nonfinite:  # the model runs there: its NaN grid cannot be had
                return (f"with {name}, the original's grid is not finite (0/0 in its coordinates), which no theta "
                        "gives; fixing the dims (--input-shape) lets it fuse")
            elif result.ran:
                return f"with {name}, {result.reason}"
        verdict.size_one = moved
        return None

    def _theta_batch(self, base: dict, pinned: set) -> tuple:
        if self.trace.theta is None or self.mode == "fixed":
            return ("static", 1)
        first = self.symbols.owners[self.trace.theta][0]
        if isinstance(first, int):
            return ("static", first)
        g = self._group_of(first[1])
        return ("static", base[first[1]]) if g in pinned else ("class", self._rep(g))

    def _broadcasts(self, base: dict, ac: int, batch: tuple) -> bool:
        """theta's batch tied to the grid's and to other dims (the image's): does the region
        also take a theta of batch 1 and give the grid the others' batch?"""
        tb = self.symbols.theta_batch_class
        if tb is None or batch[0] != "class" or self._group_of(tb) != self._group_of(batch[1]):
            return False
        if len(self.groups[self._group_of(tb)]) < 2:
            return False  # the grid's batch is theta's own: a theta of batch 1 gives a grid of 1
        trial = dict(base)
        trial[tb] = 1
        result = self.check(trial, (ac,), salt=77)
        return isinstance(result, Outcome) and result.shape[0] == base[batch[1]]

    def _size_source(self, outcomes: list[Outcome]) -> tuple[int, bool] | None:
        """A grid op whose size tensor held the output's spatial dims in every run; whether it
        also held the sampler's N and C (then it is the size input as it is)."""
        image = self.symbols.image
        for i in outcomes[0].sizes:
            if not all(o.sizes.get(i, [])[2:] == list(o.shape[1:-1]) for o in outcomes):
                continue
            exact = all(o.sizes[i][:2] == self.symbols.concrete(image, o.assign)[:2] for o in outcomes)
            return i, exact
        return None
