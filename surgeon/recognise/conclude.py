"""From a first identified setting to what the output's dims are: which output dims follow which
input dims (each group of classes varied alone, near and far), which sizes the original only
runs at (pinned), what holds with no items, where each dim at 1 leaves the output (a convention
per axis the caller's check reports, or no value at all), whether the variable's batch follows
the output's or broadcasts, and which sized node's size tensor holds computed dims.

``check(assign, salt, nan_free=False)`` is the caller's: the region run at ``assign`` and held to
what was identified, an ``Outcome`` or a ``Failure`` (``nan_free``: NaN values are the original's
undefined ones, which any value refines). ``Setting.noun`` names the output in refusals."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..rewrite.match import Refusal
from .small_dims import combinations
from .symbols import Computed, Follows, OutputDim, Static
from .ties import Failure, pinned_elsewhere, tie_co_valued


@dataclass
class Outcome:
    """One check that held: the output's shape, the setting it held for, its size-1 conventions
    ((output axis, value) where not the identified form's own), what the runner measured."""

    shape: tuple
    setting: int
    size_one: tuple
    sizes: dict
    assign: dict
    dtype: np.dtype


@dataclass
class DimsVerdict:
    batch: OutputDim = Static(1)  # the output's first dim
    spatial: list = field(default_factory=list)  # per further output dim (the last is the value's own)
    variable_batch: OutputDim = Static(1)
    broadcast_variable: bool = False  # the variable's batch may be 1 where the output's is not
    pinned: dict = field(default_factory=dict)  # class -> the only value the original accepts
    empty_follows: set = field(default_factory=set)  # pinned classes output dims follow with no items
    size_one: dict = field(default_factory=dict)  # output axis -> its size-1 convention, where moved
    size_from: int | None = None  # the sized node whose size tensor gives computed dims
    size_exact: bool = False  # that tensor is exactly the anchor's leading dims and the output's
    notes: list = field(default_factory=list)  # warnings for the report
    nan_at_one: list = field(default_factory=list)  # dims at 1 where the original's output is NaN (0/0)
    undefined_at: dict = field(default_factory=dict)  # graph input dim ("x[2]") -> 1, for those dims


@dataclass
class Setting:
    """What ``conclude`` works on: the context, the dims, the caller's check and proof, words."""

    ctx: object
    symbols: object
    dims: object  # the DimPlan identification settled on
    check: object
    proof: object = None  # .small_dims, .extent_branched (None: nothing proved)
    variable: str | None = None  # None: the output reads no variable
    noun: str = "output"
    varied_noun: str = "the output"  # what depends on a dim when a varied check fails
    nan_note: str = ("the original's output is NaN (0/0), which engines use as they happen to; the rewrite gives "
                     "the identified form's values there")
    not_finite: str = "the original's output is not finite and its finite values are not what was identified"


def conclude(s: Setting, base: dict, first: Outcome, verdict: DimsVerdict) -> Refusal | None:
    tie_co_valued(s.dims, base, lambda assign, salt: s.check(assign, salt))
    sym, plan = s.symbols, s.dims
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
            other = s.check(varied, salt)
            if isinstance(other, Failure) and not other.ran:
                continue  # the original does not run there either
            if isinstance(other, Failure):
                return Refusal(f"{s.varied_noun} depends on {name}: at {sym.name(rep, varied[rep])}, {other.reason}")
            if other.size_one != first.size_one:
                return Refusal(f"the {s.noun}'s size-1 convention changes with {name}")
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
            if not all(s.ctx.is_graph_input(sym.classes[c].value) for c in plan.groups[g]):
                return Refusal(f"the {s.noun} runs only with {sym.name(rep, base[rep])}, a size the model computes "
                               "elsewhere: whether the model keeps it there is not known")
            pinned_groups.add(g)
            verdict.pinned[rep] = base[rep]
    if len(pinned_groups) > 1:
        elsewhere = pinned_elsewhere(plan, base, pinned_groups, lambda a, salt: s.check(a, salt), f"the {s.noun}")
        if elsewhere:
            return Refusal(elsewhere)
    refusal = _empty_batch(s, base, pinned_groups, first, follows, verdict)
    if refusal:
        return refusal
    if s.proof and s.proof.extent_branched:  # a branch sized the output: its size tensor says, not a dim
        computed |= set(range(1, len(first.shape) - 1))
    dims = [Computed() if a in computed else Follows(plan.rep(follows[a])) if a in follows else Static(int(n))
            for a, n in enumerate(first.shape[:-1])]
    if computed:
        found = _size_source(s, outcomes)
        if 0 in computed or found is None:
            return Refusal(f"output dims {sorted(computed)} are computed from input dims, not copied")
        verdict.size_from, verdict.size_exact = found
    verdict.batch, verdict.spatial = dims[0], dims[1:]
    refusal = _size_one(s, base, pinned_groups, verdict)
    if refusal:
        return refusal
    verdict.variable_batch = _variable_batch(s, base, pinned_groups)
    if isinstance(verdict.variable_batch, Follows):
        verdict.broadcast_variable = _broadcasts(s, base, verdict.batch)
    return None


def _empty_batch(s: Setting, base: dict, pinned: set, first: Outcome, follows: dict,
                 verdict: DimsVerdict) -> Refusal | None:
    """A size baked into constants binds only while there are items: with a batch of 0 a
    Reshape to it takes any size (no elements to count). Each pinned group is tried at another
    value with the batch at 0: an output dim that follows it there follows the input's dim in the
    rewrite too (at every batch above 0 the original only runs where it equals the pinned value);
    a dim that neither stays nor follows cannot be written."""
    plan, sym = s.dims, s.symbols
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
        other = s.check(empty, 90 + g)
        if not isinstance(other, Outcome):
            continue  # the original does not run there either
        for axis, (a, b) in enumerate(zip(first.shape[1:-1], other.shape[1:-1]), start=1):
            if a == b:
                continue
            if a == base[rep] and b == value and follows.get(axis, g) == g:
                follows[axis] = g
                verdict.empty_follows.add(rep)
            else:
                return Refusal(f"with no items, the {s.noun}'s size follows {sym.name(rep)} other than the input does")
    return None


def _undefined(s: Setting, ones, verdict: DimsVerdict) -> None:
    """The graph-input dims of these groups, where the original has no value at a size of 1."""
    for g in ones:
        for dim in (s.symbols.classes[c] for c in s.dims.groups[g]):
            if dim.kind == "shape" and s.ctx.is_graph_input(dim.value):
                verdict.undefined_at[f"{dim.value}[{dim.axis}]"] = 1


def _size_one(s: Setting, base: dict, pinned: set, verdict: DimsVerdict) -> Refusal | None:
    """Every dynamic dim set to 1, one at a time: the output must still be what was identified,
    with some size-1 convention (the rewrite reproduces it); where the original does not run at
    1, nothing is lost."""
    plan = s.dims
    moved = dict(verdict.size_one)
    free = [g for g in range(len(plan.groups)) if g not in pinned]
    # a region proved past a branch at size 1 (small_dims) is checked at every combination
    ones_sets = combinations(free) if s.proof and s.proof.small_dims else [(g,) for g in free]
    for ones in ones_sets:
        assign = base
        for g in ones:
            assign = plan.with_value(assign, g, 1)
        name = " and ".join(s.symbols.name(plan.rep(g), 1) for g in ones)
        result = s.check(assign, 40 + sum(ones))
        if isinstance(result, Failure) and result.ran and result.nonfinite:
            # 0/0 at a size of 1 (torch's linspace exported as (end - start) / (steps - 1)): the
            # original's value is NaN there, which engines use as they happen to (a NaN cast to an
            # index); the rewrite may give any value there, provided every finite one agrees.
            undefined = s.check(assign, 40 + sum(ones), nan_free=True)
            if isinstance(undefined, Outcome):
                result = undefined
                verdict.nan_at_one.append(name)
                _undefined(s, ones, verdict)
                verdict.notes.append(f"with {name} {s.nan_note}")
        if isinstance(result, Failure) and not result.ran:
            # the original's region does not run there (a Reshape that needs the size): the
            # rewrite's value refines no value at all, and validate's draws go around that size
            _undefined(s, ones, verdict)
            continue
        if isinstance(result, Outcome):
            for axis, convention in result.size_one:
                if moved.setdefault(axis, convention) != convention:
                    return Refusal(f"the {s.noun}'s size-1 coordinate along output dim {axis} is not one value")
        elif result.ran and result.nonfinite:  # NaN and, where finite, not what was identified
            return Refusal(f"with {name}, {s.not_finite}; fixing the dims (--input-shape) lets it fuse")
        elif result.ran:
            return Refusal(f"with {name}, {result.reason}")
    verdict.size_one = moved
    return None


def _variable_batch(s: Setting, base: dict, pinned: set) -> OutputDim:
    if s.variable is None:
        return Static(1)
    first = s.symbols.owners[s.variable][0]
    if isinstance(first, int):
        return Static(first)
    g = s.dims.group_of(first.cls)
    return Static(base[first.cls]) if g in pinned else Follows(s.dims.rep(g))


def _broadcasts(s: Setting, base: dict, batch) -> bool:
    """The variable's batch tied to the output's and to other dims (the anchor's): does the
    region also take a variable of batch 1 and give the output the others' batch?"""
    plan = s.dims
    vb = s.symbols.variable_batch_class
    if vb is None or not isinstance(batch, Follows) or plan.group_of(vb) != plan.group_of(batch.cls):
        return False
    if len(plan.groups[plan.group_of(vb)]) < 2:
        return False  # the output's batch is the variable's own: a variable of batch 1 gives 1
    trial = dict(base)
    trial[vb] = 1
    result = s.check(trial, 77)
    return isinstance(result, Outcome) and result.shape[0] == base[batch.cls]


def _size_source(s: Setting, outcomes: list[Outcome]) -> tuple[int, bool] | None:
    """A sized node whose size tensor held the output's middle dims in every run; whether it also
    held the anchor's first two (then it is the anchor's size as it is)."""
    anchor = s.symbols.anchor
    for i in outcomes[0].sizes:
        if not all(o.sizes.get(i, [])[2:] == list(o.shape[1:-1]) for o in outcomes):
            continue
        exact = all(o.sizes[i][:2] == s.symbols.concrete(anchor, o.assign)[:2] for o in outcomes)
        return i, exact
    return None
