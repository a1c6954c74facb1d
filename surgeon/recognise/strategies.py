"""Every cut under every strategy before the answer is no.

``Cuts`` makes the regions of one output as they are asked for, nearest first: a cut whose
variable is itself computed is followed by one walked through it, and a refusal naming values a
retry may walk through (several candidates, one computed from another) by one walked past them.
``strategies`` tries each mode on each cut (modes in ``unfed`` read no variable: only cuts whose
variable is absent or constant, dropped), keeps each cut's first refusal, and says the nearest.
``Verdicts`` keeps what each region decided by its symbolic structure, so identical chains are
decided once. ``region_symbols`` gives a region's dim classes from the dims the caller knows.
"""

from __future__ import annotations

import dataclasses

from ..rewrite.match import Refusal
from .leaves import symbolic_key
from .region import Region
from .symbols import Symbols

MAX_CUTS = 6  # cuts tried per output, nearest first


class Cuts:
    """``make(past)``: the region with the values in ``past`` walked through, and the values a
    retry may walk through when it is a refusal."""

    def __init__(self, ctx, make, max_cuts: int = MAX_CUTS):
        self.ctx, self.make, self.max_cuts = ctx, make, max_cuts
        self.made: list = []
        self.todo, self.tried = [frozenset()], set()

    def __iter__(self):
        i = 0
        while True:
            if i == len(self.made) and not self._next():
                return
            yield self.made[i]
            i += 1

    def _next(self) -> bool:
        while self.todo and len(self.made) < self.max_cuts:
            past = self.todo.pop(0)
            if past in self.tried:
                continue
            self.tried.add(past)
            cut, through = self.make(past)
            self.made.append(cut)
            if isinstance(cut, Refusal):
                if through:
                    self.todo.append(past | frozenset(through))
            elif cut.variable is not None and self.ctx.producer(cut.variable) is not None:
                self.todo.append(past | {cut.variable})
            return True
        return False


def strategies(cuts: Cuts, modes, unfed, one, joined=lambda first, found, mode: first or found):
    """The first of ``one(cut, mode)`` that is no ``Refusal``, over every mode and cut in turn;
    else the nearest cut's refusal (``joined`` combines a cut's refusals over modes)."""
    refusals: dict[int, Refusal] = {}
    for mode in modes:
        for i, cut in enumerate(cuts):
            if not isinstance(cut, Region):
                continue
            if mode in unfed:
                if cut.variable is not None and not cut.constant_variable:
                    continue
                cut = dataclasses.replace(cut, variable=None)
            elif cut.variable is None:
                continue
            found = one(cut, mode)
            if not isinstance(found, Refusal):
                return found
            refusals[i] = joined(refusals.get(i), found, mode)
    # A strategy's refusal says what disagreed; a cut's only why no cut was found there.
    ordered = [refusals[i] for i in sorted(refusals)] + [c for c in cuts.made if isinstance(c, Refusal)]
    return ordered[0] if ordered else Refusal("no cut found")


class Verdicts:
    """What each region decided, by its structure with the dims as symbols and ``extra``."""

    def __init__(self):
        self.known: dict[tuple, object] = {}

    def __len__(self) -> int:
        return len(self.known)

    def __call__(self, ctx, region: Region, symbols: Symbols, extra: tuple, decide):
        try:
            key = symbolic_key(ctx, region, symbols, extra)
        except ValueError as exc:
            return Refusal(str(exc))
        if key not in self.known:
            self.known[key] = decide()
        return self.known[key]


def region_symbols(ctx, region: Region, anchor: str, dims_of: dict[str, tuple]) -> Symbols | Refusal:
    """The dim classes of a region: ``dims_of`` (the anchor's and the variable's dims, as the
    caller knows them) and the declared dims of every tensor whose shape the region reads."""
    dims_of = dict(dims_of)
    for leaf in region.shapes:
        source = leaf.inputs[0]
        if source not in dims_of:
            dims = ctx.shape(source)
            if dims is None:
                return Refusal(f"cannot probe: the rank of {source!r} (read by {leaf.label}) is unknown")
            dims_of[source] = tuple(dims)
    ints = {}
    for value in region.ints:
        dims = ctx.shape(value)
        ints[value] = 1 if not dims else int(dims[0])
    return Symbols(dims_of, anchor, region.variable, ints)
