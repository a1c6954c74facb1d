"""Branches on sizes that go the other way only where a dim is 1.

torch's ``linspace`` as dynamo writes it is ``where(W > 1, (arange / (W - 1) - 0.5) * 2, 0)``:
a comparison of a size that is settled for every W but 1. Proved over dims of at least 2, such
a region is affine there; then every combination of dim groups at 1 is proved on its own (those
groups at exactly 1, the others at least 2, the region evaluated there), so the proofs together
cover every size. The caller then checks each of those combinations too. Past ``MAX_GROUPS``
groups, those no branch reads (proved at 1 or more, alone and then together) range over 1 or
more in every proof, and only the rest are combined.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..rewrite.match import Refusal
from .bounds import BRANCH

MAX_GROUPS = 5  # 31 combinations at most; past that the first refusal stands
AT_LEAST_ONE = (1.0, np.inf)
AT_LEAST_TWO = (2.0, np.inf)
EXACTLY_ONE = (1.0, 1.0)


def one_groups(plan) -> list[int]:
    """The dim groups a probe may set to 1: not fixed by a static dim."""
    return [g for g, members in enumerate(plan.groups) if not any(c in plan.fixed for c in members)]


def combinations(groups: list[int]):
    for r in range(1, len(groups) + 1):
        yield from itertools.combinations(groups, r)


def prove_beyond_one(plan, base: dict, refusal: Refusal, prove_at):
    """``refusal`` (a branch on sizes at dims of at least 1) replaced by a proof over dims of at
    least 2 and one for each combination of groups at 1, or ``refusal`` itself. ``prove_at(assign,
    bounds)``: the caller's proof at those dims with each group's dims in ``bounds(group)`` (a
    ``Refusal``, or None where the region does not run); the proof it returns is marked
    ``small_dims``."""
    relaxed = prove_at(base, lambda group: AT_LEAST_TWO)
    groups = one_groups(plan)
    if isinstance(relaxed, Refusal) and BRANCH not in relaxed.reason:
        return relaxed  # past the branch it is not affine anyway: that is the reason
    if relaxed is None or isinstance(relaxed, Refusal):
        return refusal
    free: set = set()
    if len(groups) > MAX_GROUPS:  # only the groups a branch reads need their own proofs at 1
        free = _free_groups(base, groups, prove_at)
        groups = [g for g in groups if g not in free]
        if len(groups) > MAX_GROUPS:
            return refusal
    least = lambda group: AT_LEAST_ONE if group in free else AT_LEAST_TWO  # noqa: E731
    for ones in combinations(groups):
        assign = base
        for g in ones:
            assign = plan.with_value(assign, g, 1)
        proof = prove_at(assign, lambda group, ones=ones: EXACTLY_ONE if group in ones else least(group))
        if proof is None:
            continue  # the region does not run there: nor does the original
        if isinstance(proof, Refusal):
            return refusal
    relaxed.small_dims = True
    return relaxed


def _free_groups(base: dict, groups: list[int], prove_at) -> set:
    """The groups no branch reads: each proved at 1 or more with the rest at 2 or more, then all
    of them at 1 or more together (two dims may branch only at once: ``H * W > 1``), or none."""
    alone = {g for g in groups
             if _proved(prove_at(base, lambda group, g=g: AT_LEAST_ONE if group == g else AT_LEAST_TWO))}
    together = _proved(prove_at(base, lambda group: AT_LEAST_ONE if group in alone else AT_LEAST_TWO))
    return alone if together else set()


def _proved(proof) -> bool:
    return proof is not None and not isinstance(proof, Refusal)
