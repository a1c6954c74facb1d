"""Finding dims the region runs at, and keeping only ties it needs: classes tied by what the
sampler and the grid ops need equal, then by equal declared symbols (a hint, never a fact: a
tie is split again when the region accepts it, unless the model's own ops make the two dims
one), then sizes found in the region's constants, and the batch at 1 (a model traced at batch
1 whose size tensor holds that 1)."""

from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np

from surgeon import Refusal

from .dims import DimPlan, Symbols
from .verdict import Outcome
MAX_SEARCH = 256  # dim combinations tried when the base dims do not run

# ``ident`` below is the identify step's Identifier: its dims plan, its checks and its cut.


def partitions(sym: Symbols) -> Iterator[DimPlan]:
    """All distinct; then what the sampler and the grid ops need equal tied (theta's batch and a
    size tensor's N to the image's batch, its C to the image's channels; a static image dim fixes
    them); then equal declared symbols too."""
    distinct = [[c] for c in range(len(sym.classes))]
    yield DimPlan(sym, distinct)
    tied, fixed = distinct, {}
    image = sym.owners[sym.image]
    for axis, members in ((0, [sym.theta_batch_class]), (1, [])):
        for elements in sym.elements.values():  # a size given as data: [N, C, *spatial]
            if len(elements) == len(image):
                members.append(elements[axis].cls)
        members = [c for c in members if c is not None]
        if isinstance(image[axis], int):
            fixed.update({c: image[axis] for c in members})
        elif members:
            tied = _merge(tied, [image[axis].cls, *members])
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


def search(ident, base: dict) -> tuple[dict, Outcome] | None:
    """Dims the region accepts when the base ones fail: sizes found in its constants first
    (arange lengths), then their divisors (a flattened H*W base grid); then the same with the
    batch at 1 (a model traced at batch 1 whose size tensor holds that 1, declared dynamic)."""
    plan = ident.dims
    free = [g for g in range(len(plan.groups)) if not set(plan.groups[g]) & plan.batch_like]
    batches = [g for g in range(len(plan.groups)) if set(plan.groups[g]) & plan.batch_like]
    starts = [base]
    if batches:
        at_one = dict(base)
        for g in batches:
            at_one = plan.with_value(at_one, g, 1)
        starts.append(at_one)
    per_class = max(2, int(MAX_SEARCH ** (1 / len(free)))) if free else 1
    values = size_hints(ident)[:per_class]
    for start in starts:
        combos = itertools.product(values, repeat=len(free)) if free else [()]
        for combo in itertools.islice(combos, MAX_SEARCH):
            if not combo and start is base:
                continue  # the base itself failed already
            assign = dict(start)
            for g, v in zip(free, combo):
                assign = plan.with_value(assign, g, v)
            result = ident.start(assign)
            if isinstance(result, Outcome):
                return assign, result
    return None


def size_hints(ident) -> list[int]:
    found: set[int] = set()
    arrays = [ident.ctx.constant(name) for name in ident.cut.constants]
    arrays += [n.attr("value") for n in ident.cut.nodes if n.is_op("Constant")]
    for value in arrays:
        if not isinstance(value, np.ndarray):
            continue
        found.update(int(d) for d in value.shape if 2 <= d <= 4096)
        if value.dtype.kind in "iu" and value.size <= 8:
            found.update(int(v) for v in value.reshape(-1) if 2 <= v <= 4096)
    found.update(d for d in ident.ctx.shape(ident.cut.grid) or () if isinstance(d, int) and 2 <= d <= 4096)
    divisors = {d for n in found for d in range(2, n) if n % d == 0} - found
    return sorted(found) + sorted(divisors)


def split(ident, base: dict, ac: int) -> dict | Refusal:
    """Untie every class whose own value the region accepts: a tie must be needed. A tie whose
    classes, once apart, give a grid the sampler would still take (its batch is the image's) but
    not an affine one, is a refusal: the model runs there, the rewrite would not compute the
    same."""
    plan, sym = ident.dims, ident.symbols
    image_batch = sym.owners[sym.image][0]
    changed = True
    while changed:
        changed = False
        for g, members in enumerate(plan.groups):
            for c in members[1:] if len(members) > 1 else ():
                if _enforced(ident.ctx, sym, members[0], c):
                    continue  # the model's own ops make them one dim: no run has them apart
                trial = dict(base)
                trial[c] = plan.fresh(g, set(base.values()))
                result = ident.check(trial, (ac,), salt=5)
                if isinstance(result, Outcome):
                    plan.groups[g] = [m for m in members if m != c]
                    plan.groups.append([c])
                    base, changed = trial, True
                    break
                n = image_batch if isinstance(image_batch, int) else trial[image_batch.cls]
                if result.ran and result.grid_batch == n:
                    names = " and ".join(sym.name(m) for m in (members[0], c))
                    return Refusal(f"the grid is affine only while {names} are equal: otherwise {result.reason}")
            if changed:
                break
    return base


def _enforced(ctx, sym, first: int, other: int) -> bool:
    """Whether the graph's ops make two shape dims one (``ctx.same_dim``)."""
    a, b = sym.classes[first], sym.classes[other]
    return a.kind == b.kind == "shape" and ctx.same_dim(a.value, a.axis, b.value, b.axis)


def _merge(groups: list[list[int]], members: list[int]) -> list[list[int]]:
    """The partition with every group holding one of ``members`` merged into one."""
    hit = [g for g in groups if set(g) & set(members)]
    rest = [g for g in groups if not set(g) & set(members)]
    return rest + [sorted(c for g in hit for c in g)] if hit else groups
