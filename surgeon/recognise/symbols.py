"""The dims a probe chooses, and how a dim of the result is known.

``Symbols``: every dynamic dim of a tensor that feeds a region (the anchor, the variable, the
inputs of fed ``Shape`` nodes) and every element of a run-time int tensor it reads (a size given
as data) is a class of its own, numbered in order of appearance. Nothing is merged by name: two
dims declared with the same symbol get different probe values, so which output dim follows
which input dim is proved by evaluation, never read from a name. Declared names are only carried
over to the dims the rewrite declares.

``DimPlan``: the classes grouped into ties (classes that must take one value for the region to
run), values fixed by static dims, and the values a probe assigns to each group.

A dim of what the region computes is ``Static``, ``Follows`` a class, or is ``Computed`` from
input dims (a rewrite then writes it from pieces: ``surgeon.rewrite.sizes``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..rewrite.sizes import DimOf, ElemOf, Fixed

BATCH_POOL = (2, 3, 4, 5, 6, 7, 8)
SPATIAL_POOL = (5, 7, 6, 9, 11, 13, 10, 14, 8, 12, 15, 17, 19, 16, 18, 20, 21, 22, 23, 25)


@dataclass(frozen=True)
class Static:
    n: int


@dataclass(frozen=True)
class Follows:
    cls: int  # a probe class of input dims (Symbols.classes)


@dataclass(frozen=True)
class Computed:
    """An output dim computed from input dims (H // 2), not copied."""


OutputDim = Static | Follows | Computed


@dataclass(frozen=True)
class Dim:
    value: str
    axis: int
    kind: str  # "shape": an axis of the value's shape; "elem": an element of an int tensor
    declared: str | None = None  # the symbol the model declares for it (a name, not a fact)


class Symbols:
    def __init__(self, dims_of: dict[str, tuple], anchor: str, variable: str | None,
                 ints: dict[str, int] | None = None):
        """``dims_of``: value -> declared dims (int, str or None per axis), ``anchor`` first (the
        tensor the result's leading dims follow); ``ints``: run-time int tensors read as data ->
        their length."""
        self.classes: list[Dim] = []
        self.owners: dict[str, tuple] = {}  # value -> per axis an int or Follows(class)
        self.elements: dict[str, tuple] = {}  # int tensor -> per element Follows(class)
        for value, dims in dims_of.items():
            self.owners[value] = tuple(d if isinstance(d, int) else self._new(value, i, "shape", d)
                                       for i, d in enumerate(dims))
        for value, length in (ints or {}).items():
            self.elements[value] = tuple(self._new(value, i, "elem", None) for i in range(length))
        self.anchor, self.variable = anchor, variable
        self.batch_class = _class_of(self.owners.get(anchor, ()), 0)
        self.variable_batch_class = _class_of(self.owners.get(variable, ()), 0) if variable else None

    def _new(self, value: str, axis: int, kind: str, declared) -> Follows:
        self.classes.append(Dim(value, axis, kind, declared if isinstance(declared, str) and declared else None))
        return Follows(len(self.classes) - 1)

    def concrete(self, value: str, assign: dict[int, int]) -> list[int]:
        table = self.owners if value in self.owners else self.elements
        return [d if isinstance(d, int) else assign[d.cls] for d in table[value]]

    def at(self, assign: dict[int, int]) -> dict[str, tuple]:
        """Every owner's concrete dims and every int tensor's values at ``assign`` (a probe's)."""
        return {value: tuple(self.concrete(value, assign)) for value in [*self.owners, *self.elements]}

    def pattern(self, value: str) -> tuple:
        """The owner's dims with classes by index: comparable across regions of one structure."""
        return self.owners.get(value) or self.elements.get(value) or ()

    def name(self, cls: int, value: int | None = None) -> str:
        """How a class is named in messages: its declared symbol and where it is ("N (x[0])"),
        or with a value ("N=2 (x[0])")."""
        dim = self.classes[cls]
        where = f"{dim.value}[{dim.axis}]" if dim.kind == "shape" else f"{dim.value} element {dim.axis}"
        shown = "" if value is None else f"={value}"
        return f"{dim.declared}{shown} ({where})" if dim.declared else f"{where}{shown}"

    def dim_name(self, cls: int) -> str | None:
        """The name a value_info gives a dim that follows this class: the declared symbol it
        copies, or for an element of a size tensor, one made from the tensor's name."""
        dim = self.classes[cls]
        return dim.declared if dim.kind == "shape" else f"{dim.value}_{dim.axis}"

    def piece(self, dim: OutputDim, size_value: str | None = None, axis: int = 0):
        """Where a rewrite reads an output dim at run time (``surgeon.rewrite.sizes``): a constant,
        the dim of a value's shape or the element of a size tensor it follows, or for a computed
        dim, element ``axis`` of ``size_value`` (the model's own size tensor; None: none)."""
        if isinstance(dim, Static):
            return Fixed(dim.n)
        if isinstance(dim, Computed):
            return ElemOf(size_value, axis) if size_value else None
        found = self.classes[dim.cls]
        return DimOf(found.value, found.axis) if found.kind == "shape" else ElemOf(found.value, found.axis)


def _class_of(dims: tuple, axis: int):
    return dims[axis].cls if len(dims) > axis and isinstance(dims[axis], Follows) else None


@dataclass
class DimPlan:
    """Which classes are tied into one group, which take a fixed value, and how a probe assigns
    values to them (all groups distinct, none equal to a static dim of the tensors)."""

    symbols: Symbols
    groups: list[list[int]]
    fixed: dict[int, int] = field(default_factory=dict)  # class -> a value it must take

    def __post_init__(self):
        self.batch_like = {self.symbols.batch_class, self.symbols.variable_batch_class} - {None}
        self.static = {d for dims in self.symbols.owners.values() for d in dims if isinstance(d, int)}

    def group_of(self, cls: int) -> int:
        return next(i for i, g in enumerate(self.groups) if cls in g)

    def pool(self, group: int):
        return BATCH_POOL if set(self.groups[group]) & self.batch_like else SPATIAL_POOL

    def fresh(self, group: int, used: set) -> int:
        return next(v for v in itertools.chain(self.pool(group), itertools.count(26))
                    if v not in used and v not in self.static)

    def base(self) -> dict[int, int]:
        used: set = set()
        values = {}
        for g, members in enumerate(self.groups):
            fixed = [self.fixed[c] for c in members if c in self.fixed]
            values[g] = fixed[0] if fixed else self.fresh(g, used)
            used.add(values[g])
        return {c: values[g] for g, members in enumerate(self.groups) for c in members}

    def with_value(self, base: dict, group: int, value: int) -> dict[int, int]:
        out = dict(base)
        out.update({c: value for c in self.groups[group]})
        return out

    def rep(self, group: int) -> int:
        """The class that stands for a group: the anchor's dims first (its Shape is read anyway)."""
        members = self.groups[group]
        anchor = [c for c in members if self.symbols.classes[c].value == self.symbols.anchor]
        return (anchor or sorted(members, key=lambda c: self.symbols.classes[c].kind != "shape"))[0]

    def far(self, base: dict) -> int:
        """A dim value far from the probe's (its multiples and divisors included)."""
        value = 4 * max(list(base.values()) + [8]) + 7
        while value in self.static or value in base.values():
            value += 1
        return value
