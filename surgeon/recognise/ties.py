"""Finding dims a region runs at, and keeping only the ties it needs.

Classes are tied by what the consumer of the result needs equal (the variable's batch, and a
size tensor's N and C, to the anchor's), then by equal declared symbols (a hint, never a fact: a
tie is split again when the region accepts it apart, unless the model's own ops make the two
dims one), then sizes found in the region's constants are tried, and the batch at 1 (a model
traced at batch 1 whose size tensor holds that 1).

A check at one set of dims gives what the caller verified there, or a ``Failure``: an
observation, not yet a refusal.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from ..rewrite.match import Refusal
from .symbols import DimPlan, Symbols

MAX_SEARCH = 256  # dim combinations tried when the base dims do not run


@dataclass
class Failure:
    """One check that did not verify: an observation at one set of dims, not yet a refusal."""

    reason: str
    ran: bool  # the region ran, its result did not verify
    nonfinite: bool = False
    batch: int | None = None  # the result's batch when it ran


def partitions(sym: Symbols, ctx=None) -> Iterator[DimPlan]:
    """All distinct but the dims the graph's ops make one (``ctx.same_dim``: a Pad's batch and its
    input's); then what the consumer needs equal tied (the variable's batch and a size tensor's N
    to the anchor's batch, its C to the anchor's channels; a static anchor dim fixes them); then
    equal declared symbols too."""
    distinct = [[c] for c in range(len(sym.classes))]
    if ctx is not None:
        for a, b in itertools.combinations(range(len(sym.classes)), 2):
            if _enforced(ctx, sym, a, b):
                distinct = _merge(distinct, [a, b])
    yield DimPlan(sym, distinct)
    tied, fixed = distinct, {}
    anchor = sym.owners[sym.anchor]
    for axis, members in ((0, [sym.variable_batch_class]), (1, [])):
        for elements in sym.elements.values():  # a size given as data: [N, C, *spatial]
            if len(elements) == len(anchor):
                members.append(elements[axis].cls)
        members = [c for c in members if c is not None]
        if isinstance(anchor[axis], int):
            fixed.update({c: anchor[axis] for c in members})
        elif members:
            tied = _merge(tied, [anchor[axis].cls, *members])
    if tied != distinct or fixed:
        yield DimPlan(sym, [list(g) for g in tied], dict(fixed))
    by_name: dict[str, list[int]] = {}
    for c, dim in enumerate(sym.classes):
        if dim.declared:
            by_name.setdefault(dim.declared, []).append(c)
    named = tied
    for members in by_name.values():
        named = _merge(named, members)
    if named != tied:
        yield DimPlan(sym, [list(g) for g in named], dict(fixed))


def search(plan: DimPlan, base: dict, start: Callable, hints: list[int]) -> tuple | None:
    """Dims the region accepts when the base ones fail: one group at each of ``hints`` (sizes found
    in its constants, then their divisors), then combinations of them; then the same with the
    batch at 1. ``start(assign)``: the caller's first check there, a ``Failure`` when it does not
    verify."""
    free = [g for g in range(len(plan.groups)) if not set(plan.groups[g]) & plan.batch_like]
    batches = [g for g in range(len(plan.groups)) if set(plan.groups[g]) & plan.batch_like]
    starts = [base]
    if batches:
        at_one = dict(base)
        for g in batches:
            at_one = plan.with_value(at_one, g, 1)
        starts.append(at_one)
    per_class = max(2, int(MAX_SEARCH ** (1 / len(free)))) if free else 1
    values = hints[:per_class]
    for first in starts:  # one group at a hint (a size baked into a Tile's count), then combinations
        singles = [(g, v) for g in free for v in hints if v != first[plan.rep(g)]]
        for g, v in singles[:MAX_SEARCH]:
            assign = plan.with_value(first, g, v)
            result = start(assign)
            if not isinstance(result, Failure):
                return assign, result
        combos = itertools.product(values, repeat=len(free)) if free else [()]
        for combo in itertools.islice(combos, MAX_SEARCH):
            if not combo and first is base:
                continue  # the base itself failed already
            assign = dict(first)
            for g, v in zip(free, combo):
                assign = plan.with_value(assign, g, v)
            result = start(assign)
            if not isinstance(result, Failure):
                return assign, result
    return None


def size_hints(ctx, constants: list[str], nodes, output: str) -> list[int]:
    """Sizes a region's constants hold (their lengths, short int tensors' values) and the
    output's declared static dims, then their divisors (a flattened H*W table)."""
    found: set[int] = set()
    arrays = [ctx.constant(name) for name in constants]
    arrays += [n.attr("value") for n in nodes if n.is_op("Constant")]
    for value in arrays:
        if not isinstance(value, np.ndarray):
            continue
        found.update(int(d) for d in value.shape if 2 <= d <= 4096)
        if value.dtype.kind in "iu" and value.size <= 8:
            found.update(int(v) for v in value.reshape(-1) if 2 <= v <= 4096)
    found.update(d for d in ctx.shape(output) or () if isinstance(d, int) and 2 <= d <= 4096)
    divisors = {d for n in found for d in range(2, n) if n % d == 0} - found
    return sorted(found) + sorted(divisors)


def split(ctx, plan: DimPlan, base: dict, check: Callable, holds: str) -> dict | Refusal:
    """Untie every class whose own value the region accepts: a tie must be needed. A tie whose
    classes, once apart, give a result the consumer would still take (its batch is the anchor's)
    but that fails ``check(assign)``, is a refusal: the model runs there, the rewrite would not
    compute the same. ``holds``: what the refusal says holds only while the tie does."""
    sym = plan.symbols
    anchor_batch = sym.owners[sym.anchor][0]
    changed = True
    while changed:
        changed = False
        for g, members in enumerate(plan.groups):
            for c in members[1:] if len(members) > 1 else ():
                if _enforced(ctx, sym, members[0], c):
                    continue  # the model's own ops make them one dim: no run has them apart
                trial = dict(base)
                trial[c] = plan.fresh(g, set(base.values()))
                result = check(trial)
                if not isinstance(result, Failure):
                    plan.groups[g] = [m for m in members if m != c]
                    plan.groups.append([c])
                    base, changed = trial, True
                    break
                n = anchor_batch if isinstance(anchor_batch, int) else trial[anchor_batch.cls]
                if result.ran and result.batch == n:
                    names = " and ".join(sym.name(m) for m in (members[0], c))
                    return Refusal(f"{holds} only while {names} are equal: otherwise {result.reason}")
            if changed:
                break
    return base


def runs(result) -> bool:
    """A check whose region ran, whether or not what it computed verified."""
    return not isinstance(result, Failure) or result.ran


def tie_co_valued(plan: DimPlan, base: dict, check: Callable) -> None:
    """Groups that share a value in ``base`` and run only when varied together are one dim (a
    matrix expanded to the anchor's batch elsewhere in the model, say): tie them, so that neither
    is taken for a size baked into constants. ``check(assign, salt)``: the caller's check."""
    changed = True
    while changed:
        changed = False
        for g in range(len(plan.groups)):
            value = base[plan.rep(g)]
            partners = [h for h in range(len(plan.groups)) if h != g and base[plan.rep(h)] == value]
            if not partners:
                continue
            trial = plan.with_value(base, g, plan.fresh(g, set(base.values())))
            if not runs(check(trial, g + 1)):
                together = dict(trial)
                for h in partners:
                    together = plan.with_value(together, h, trial[plan.rep(g)])
                if runs(check(together, g + 1)):
                    partners = _needed(plan, trial, g, partners, check)
                    merged = sorted(c for i in [g, *partners] for c in plan.groups[i])
                    plan.groups = [m for i, m in enumerate(plan.groups) if i not in (g, *partners)] + [merged]
                    changed = True
                    break


def _needed(plan: DimPlan, trial: dict, g: int, partners: list, check: Callable) -> list:
    """The partners group ``g`` must move with for the region to run: each one left at its own
    value where the region still runs without it (a dim that merely shares the probe's value is no
    tie: H and W both at 2 are not one dim because a table's length follows W)."""
    needed = list(partners)
    for h in list(partners):
        rest = [i for i in needed if i != h]
        alone = dict(trial)
        for i in rest:
            alone = plan.with_value(alone, i, trial[plan.rep(g)])
        if runs(check(alone, g + 1)):
            needed = rest
    return needed


def pinned_elsewhere(plan: DimPlan, base: dict, pinned: set, check: Callable, what: str) -> str | None:
    """Sizes baked into constants bind one size only if no other runs: two pinned dims swapped, or
    one doubled while the other halves (a Reshape to H * W elements takes both), must not run.
    ``what``: how the message names the region's result."""
    sym = plan.symbols
    groups = sorted(pinned)
    for i, g in enumerate(groups):
        for h in groups[i + 1:]:
            a, b = base[plan.rep(g)], base[plan.rep(h)]
            trials = [(b, a)] if a != b else []
            trials += [(2 * a, b // 2)] if b % 2 == 0 and b > 1 else []
            for va, vb in trials:
                trial = plan.with_value(plan.with_value(base, g, va), h, vb)
                if runs(check(trial, 95 + g)):
                    return (f"{what} runs with {sym.name(plan.rep(g), va)} and {sym.name(plan.rep(h), vb)} as well "
                            f"as at the sizes baked into its constants ({sym.name(plan.rep(g), a)}, "
                            f"{sym.name(plan.rep(h), b)}): they are not one size, and the rewrite would be written for one")
    return None


def _enforced(ctx, sym, first: int, other: int) -> bool:
    """Whether the graph's ops make two shape dims one (``ctx.same_dim``)."""
    a, b = sym.classes[first], sym.classes[other]
    return a.kind == b.kind == "shape" and ctx.same_dim(a.value, a.axis, b.value, b.axis)


def _merge(groups: list[list[int]], members: list[int]) -> list[list[int]]:
    """The partition with every group holding one of ``members`` merged into one."""
    hit = [g for g in groups if set(g) & set(members)]
    rest = [g for g in groups if not set(g) & set(members)]
    return rest + [sorted(c for g in hit for c in g)] if hit else groups
