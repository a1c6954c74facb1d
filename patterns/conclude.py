"""From a first verified setting to a verdict: which output dims follow which input dims (each
class varied alone), what the grid is at size 1, whether theta's batch broadcasts, where computed
dims come from. ``ident`` is the identify step's Identifier (its checks, dims plan and proof)."""

from __future__ import annotations

from surgeon import Refusal
from surgeon.recognise import Computed, Failure, Follows, Static, combinations, pinned_elsewhere, tie_co_valued

from .sources import MapSource
from .verdict import Outcome, Verdict


def conclude(ident, base: dict, first: Outcome, ac: int) -> Verdict | Refusal:
    check = lambda assign, salt: ident.check(assign, (ac,), salt=salt)  # noqa: E731
    tie_co_valued(ident.dims, base, check)
    sym, plan = ident.symbols, ident.dims
    verdict = Verdict(k=ident.k, homogeneous=bool(ident.layout and ident.layout.homogeneous), align_corners=ac,
                      precision=ident.precision, grid_dtype=first.grid_dtype,
                      size_one=dict(first.agreement.size_one),
                      theta_map=ident.source.theta_map if isinstance(ident.source, MapSource) else None,
                      theta_value=ident.source.theta if ident.mode == "fixed" else None,
                      reads=ident.proof.reads if ident.proof else 0)
    follows: dict[int, int] = {}  # output axis -> group
    computed: set[int] = set()
    outcomes = [first]
    pinned_groups = set()
    for g in range(len(plan.groups)):
        rep = plan.rep(g)
        name = sym.name(rep)
        ran = False
        # A second, far value: H // 16 is 0 at every nearby value (the region fails there: not
        # a pinned size), and H // 2 is 3 at both 6 and 7 (a computed dim is not a static one).
        for value, salt in ((plan.fresh(g, set(base.values())), g + 1), (plan.far(base), g + 61)):
            varied = plan.with_value(base, g, value)
            other = ident.check(varied, (ac,), salt=salt)
            if isinstance(other, Failure) and not other.ran:
                continue  # the original does not run there either
            if isinstance(other, Failure):
                what = "theta's transformation in the grid" if ident.mode == "map" else "the grid"
                return Refusal(f"{what} depends on {name}: at {sym.name(rep, varied[rep])}, {other.reason}")
            if other.agreement.size_one != first.agreement.size_one:
                return Refusal(f"the grid's size-1 convention changes with {name}")
            ran = True
            outcomes.append(other)
            for axis, (a, b) in enumerate(zip(first.shape[:-1], other.shape[:-1])):
                if a == b:
                    continue
                if a != base[rep] or b != varied[rep] or follows.get(axis, g) != g:
                    computed.add(axis)
                else:
                    follows[axis] = g
        if not ran:  # runs at one size only: sizes baked into constants
            if not all(ident.ctx.is_graph_input(sym.classes[c].value) for c in plan.groups[g]):
                return Refusal(f"the grid runs only with {sym.name(rep, base[rep])}, a size the model computes "
                               "elsewhere: whether the model keeps it there is not known")
            pinned_groups.add(g)
            verdict.pinned[rep] = base[rep]
    if len(pinned_groups) > 1:
        elsewhere = pinned_elsewhere(plan, base, pinned_groups, check, "the grid")
        if elsewhere:
            return Refusal(elsewhere)
    refusal = _empty_batch(ident, base, ac, pinned_groups, first, follows, verdict)
    if refusal:
        return refusal
    if ident.proof and ident.proof.extent_branched:  # a branch sized the grid: its size tensor says, not a dim
        computed |= set(range(1, len(first.shape) - 1))
    dims = [Computed() if a in computed else Follows(plan.rep(follows[a])) if a in follows else Static(int(n))
            for a, n in enumerate(first.shape[:-1])]
    if computed:
        found = _size_source(ident, outcomes)
        if 0 in computed or found is None:
            return Refusal(f"output dims {sorted(computed)} are computed from input dims, not copied")
        verdict.size_from, verdict.size_exact = found
    verdict.batch, verdict.spatial = dims[0], dims[1:]
    refusal = _size_one(ident, base, ac, pinned_groups, verdict)
    if refusal:
        return refusal
    verdict.theta_batch = _theta_batch(ident, base, pinned_groups)
    if ident.mode == "fixed":
        verdict.theta_batch = Static(ident.source.theta.shape[0])
    elif isinstance(verdict.theta_batch, Follows):
        verdict.broadcast_theta = _broadcasts(ident, base, ac, verdict.batch)
    return verdict


def _empty_batch(ident, base: dict, ac: int, pinned: set, first: Outcome, follows: dict,
                 verdict: Verdict) -> Refusal | None:
    """A size baked into constants binds only while there are items: with a batch of 0 a
    Reshape to it takes any size (no elements to count). Each pinned group is tried at another
    value with the batch at 0: an output dim that follows it there follows the input's dim in the
    rewrite too (at every batch above 0 the original only runs where it equals the pinned value);
    a dim that neither stays nor follows cannot be written."""
    plan, sym = ident.dims, ident.symbols
    batch = sym.batch_class
    if batch is None or not pinned:
        return None
    batch_group = plan.group_of(batch)
    if batch_group in pinned:
        return None
    for g in sorted(pinned):
        rep = plan.rep(g)
        value = plan.fresh(g, set(base.values()))
        empty = plan.with_value(plan.with_value(base, batch_group, 0), g, value)
        other = ident.check(empty, (ac,), salt=90 + g)
        if not isinstance(other, Outcome):
            continue  # the original does not run there either
        for axis, (a, b) in enumerate(zip(first.shape[1:-1], other.shape[1:-1]), start=1):
            if a == b:
                continue
            if a == base[rep] and b == value and follows.get(axis, g) == g:
                follows[axis] = g
                verdict.empty_follows.add(rep)
            else:
                return Refusal(f"with no items, the grid's size follows {sym.name(rep)} other than the input does")
    return None


def _undefined(ident, plan, ones, verdict: Verdict) -> None:
    """The graph-input dims of these groups, where the original has no value at a size of 1."""
    for g in ones:
        for dim in (ident.symbols.classes[c] for c in plan.groups[g]):
            if dim.kind == "shape" and ident.ctx.is_graph_input(dim.value):
                verdict.undefined_at[f"{dim.value}[{dim.axis}]"] = 1


def _size_one(ident, base: dict, ac: int, pinned: set, verdict: Verdict) -> Refusal | None:
    """Every dynamic dim set to 1, one at a time: the grid must still be affine_grid(theta)
    with some size-1 coordinate (the rewrite reproduces it); where the original does not run
    at 1, nothing is lost."""
    plan = ident.dims
    moved = dict(verdict.size_one)
    free = [g for g in range(len(plan.groups)) if g not in pinned]
    # a region proved past a branch at size 1 (surgeon.recognise.small_dims) is checked at every combination
    ones_sets = combinations(free) if ident.proof and ident.proof.small_dims else [(g,) for g in free]
    for ones in ones_sets:
        assign = base
        for g in ones:
            assign = plan.with_value(assign, g, 1)
        name = " and ".join(ident.symbols.name(plan.rep(g), 1) for g in ones)
        result = ident.check(assign, (ac,), salt=40 + sum(ones))
        if isinstance(result, Failure) and result.ran and result.nonfinite:
            # 0/0 at a size of 1 (torch's linspace exported as (end - start) / (steps - 1)): the
            # original's grid is NaN there, which engines sample as they happen to (a NaN cast to
            # an index); the rewrite may give any value there and gives affine_grid's, provided
            # every finite coordinate still agrees.
            undefined = ident.check(assign, (ac,), salt=40 + sum(ones), nan_free=True)
            if isinstance(undefined, Outcome):
                result = undefined
                verdict.nan_at_one.append(name)
                _undefined(ident, plan, ones, verdict)
                verdict.notes.append(f"with {name} the original's grid is NaN (0/0 in its coordinates), which "
                                     "engines sample as they happen to; the rewrite samples at affine_grid's "
                                     "coordinates there")
        if isinstance(result, Failure) and not result.ran:
            # the original's region does not run there (a Reshape that needs the size): the
            # rewrite's value refines no value at all, and validate's draws go around that size
            _undefined(ident, plan, ones, verdict)
            continue
        if isinstance(result, Outcome):
            for axis, coordinate in result.agreement.size_one:
                if moved.setdefault(axis, coordinate) != coordinate:
                    return Refusal(f"the grid's size-1 coordinate along output dim {axis} is not one value")
        elif result.ran and result.nonfinite:  # NaN and, where finite, not affine_grid(theta)
            return Refusal(f"with {name}, the original's grid is not finite and its finite coordinates are not "
                           "affine_grid(theta); fixing the dims (--input-shape) lets it fuse")
        elif result.ran:
            return Refusal(f"with {name}, {result.reason}")
    verdict.size_one = moved
    return None


def _theta_batch(ident, base: dict, pinned: set):
    if ident.cut.variable is None or ident.mode == "fixed":
        return Static(1)
    first = ident.symbols.owners[ident.cut.variable][0]
    if isinstance(first, int):
        return Static(first)
    g = ident.dims.group_of(first.cls)
    return Static(base[first.cls]) if g in pinned else Follows(ident.dims.rep(g))


def _broadcasts(ident, base: dict, ac: int, batch) -> bool:
    """theta's batch tied to the grid's and to other dims (the image's): does the region also
    take a theta of batch 1 and give the grid the others' batch?"""
    plan = ident.dims
    tb = ident.symbols.variable_batch_class
    if tb is None or not isinstance(batch, Follows) or plan.group_of(tb) != plan.group_of(batch.cls):
        return False
    if len(plan.groups[plan.group_of(tb)]) < 2:
        return False  # the grid's batch is theta's own: a theta of batch 1 gives a grid of 1
    trial = dict(base)
    trial[tb] = 1
    result = ident.check(trial, (ac,), salt=77)
    return isinstance(result, Outcome) and result.shape[0] == base[batch.cls]


def _size_source(ident, outcomes: list[Outcome]) -> tuple[int, bool] | None:
    """A grid op whose size tensor held the output's spatial dims in every run; whether it
    also held the sampler's N and C (then it is the size input as it is)."""
    image = ident.symbols.anchor
    for i in outcomes[0].sizes:
        if not all(o.sizes.get(i, [])[2:] == list(o.shape[1:-1]) for o in outcomes):
            continue
        exact = all(o.sizes[i][:2] == ident.symbols.concrete(image, o.assign)[:2] for o in outcomes)
        return i, exact
    return None
