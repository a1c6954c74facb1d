"""Is a cut region, from the ops, affine in its variable (or, with none fed, a function of the
dims alone), and which of the variable's elements does it read? The abstract interpretation
(``prove``) from the region's leaves (``leaves``: the variable, its dims as symbols within their
bounds, sizes given as data) to the output, at one set of dims the region runs at.

Decides: an ``AffineProof`` (the elements read, the float casts that narrow on the way), or a
``Refusal`` naming the op on the variable's path with no affine rule, the branch on sizes, the
integer input used as data, a size that depends on data, a term that grows as a square or
faster with the positions and dims (``positions``), or the declared value_info the evaluated region contradicts. ``DoesNotRun`` where the region does not run at these dims.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SurgeonError
from ..rewrite.match import Refusal
from .bounds import BRANCH
from .elements import BRANCHED, OTHER, NotProved, branch_of
from .leaves import AT_LEAST_ONE, declared_lie, leaves
from .prove import prove
from .region import DoesNotRun, Region


@dataclass
class AffineProof:
    reads: int  # bitmask of the variable's elements (one item, row-major) the output is computed from
    item: int  # elements in one item of the variable
    narrowed: list[str]  # float casts that narrow on the way
    extent_branched: bool = False  # a sized node's size came out of a branch: read it, never a dim
    small_dims: bool = False  # proved over dims of at least 2 and each combination at 1 (small_dims)
    values: dict = field(default_factory=dict, repr=False)  # the region's values where it was proved


def prove_affine(ctx, region: Region, symbols, feeds: dict, group_of, values: dict | None = None,
                 bounds=lambda group: AT_LEAST_ONE, rules=None, item: int | None = None,
                 extent_kept: bool = False, noun: str = "output", variable_noun: str = "the variable"):
    """The proof at one set of dims (``feeds``: the region's inputs there). ``group_of(cls)``: the
    group a class is tied into at these dims; ``values``: the region evaluated there, when at hand;
    ``bounds(group)``: the (lo, hi) every dim of that group is proved over; ``rules``: the caller's
    for its own ops; ``item``: the variable's elements per item (None: not fed); ``extent_kept``:
    the output's extent is a size tensor the rewrite reads as it is (a size computed any way at
    all is then no hazard: only the batch may otherwise branch)."""
    found = leaves(region, symbols, feeds, group_of, bounds, item)
    try:
        proof = prove(ctx, region.nodes, [region.output], found, feeds, rules, values)
    except NotProved as exc:
        return Refusal(str(exc))
    except SurgeonError as exc:
        raise DoesNotRun(str(exc)) from None
    out = proof.outputs[region.output]
    if (out.kind == OTHER).any():
        why = out.why or "an op on its path has no affine rule"
        if BRANCH in why:  # affine, but with coefficients a branch chooses
            return Refusal(f"the {noun} depends on {why}")
        return Refusal(f"the {noun} is not affine in {variable_noun if item else 'its inputs'}: {why}")
    if branch_of([out]):
        return Refusal(f"the {noun}'s values depend on {branch_of([out])}")
    kept = bool(out.resized) and extent_kept
    if out.resized and not kept:  # only the batch may: the consumer holds it to the anchor's
        axes = out.axes
        if axes is None or axes[0] != BRANCHED or any(a == BRANCHED for a in axes[1:]):
            return Refusal(f"the {noun}'s size depends on {out.resized}")
    order, made = proof.positions.get(region.output, (0, None))
    if made is not None:
        return Refusal(f"the {noun}'s values grow as the power {order} of the positions and dims ({made}): a term "
                       "that grows as a square or faster can stay under the tolerance at every size tried and be "
                       "anything past them, and no affine form has one")
    lie = declared_lie(ctx, region.nodes, proof.values)
    if lie:
        return Refusal(lie)
    return AffineProof(out.all_reads(), item or 0, proof.narrowed, extent_branched=kept, values=proof.values)
