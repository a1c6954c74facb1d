"""What a region whose dims are symbols starts from, for the proof and for its cache.

``leaves``: the abstract value of each run-time leaf at one probe's dims. The variable reads its
own elements; a ``Shape`` of a run-time tensor gives its declared static dims as constants and
its dynamic dims as sizes within the bounds of their group (at least 1 unless told), each tagged
with its group; a run-time integer tensor read as a size has no bounds and may only set sizes.

``symbolic_key``: the region's structural key with each leaf's dims pattern, so regions of one
structure and one dims pattern share a verdict. ``declared_lie``: a declared static dim the
evaluated region contradicts (that value_info is not believed).
"""

from __future__ import annotations

import numpy as np

from ..graph.node import shape_range
from .elements import KNOWN, Abstract, dims, known, variable
from .key import region_key, shape_tag
from .region import Region

AT_LEAST_ONE = (1.0, np.inf)


def leaves(region: Region, symbols, feeds: dict, group_of, bounds=lambda group: AT_LEAST_ONE,
           item: int | None = None) -> dict[str, Abstract]:
    """``item``: the variable's elements per item (None: the variable is not one here);
    ``group_of(cls)``: the group a dim class is tied into at these dims; ``bounds(group)``: the
    (lo, hi) every dim of that group is proved over."""
    found: dict[str, Abstract] = {}
    if region.variable is not None and item is not None:
        owner = symbols.owners[region.variable]
        found[region.variable] = variable(np.shape(feeds[region.variable]), item)
        found[region.variable].axes = tuple(-1 if isinstance(d, int) else group_of(d.cls) for d in owner)
        _fix(found[region.variable], region.fixed, item)
    for node in region.folded:
        found[node.outputs[0]] = known(np.asarray(feeds[node.outputs[0]]))
    for leaf in region.shapes:
        source_dims = symbols.owners[leaf.inputs[0]]
        value = np.asarray(feeds[leaf.outputs[0]])
        if leaf.op_type == "Size":
            static = all(isinstance(d, int) for d in source_dims)
            found[leaf.outputs[0]] = known(value) if static else dims(value.shape, 1, np.inf)
            continue
        start, end = shape_range(leaf, len(source_dims))
        abstract = dims(value.shape, 1, np.inf, sym=-1)
        for i, d in enumerate(source_dims[start:end]):
            if isinstance(d, int):  # a declared static dim of a graph input: the model's interface
                abstract.kind[i], abstract.lo[i], abstract.hi[i] = KNOWN, d, d
            else:  # dims tied into one group are one dim: Max(N, N') of tied batches is settled
                abstract.sym[i] = group_of(d.cls)
                abstract.lo[i], abstract.hi[i] = bounds(abstract.sym[i])
        found[leaf.outputs[0]] = abstract
    for value in region.ints:
        found[value] = dims(np.shape(feeds[value]), -np.inf, np.inf, data=value)
    return found


def _fix(abstract, fixed: dict, item: int) -> None:
    """The variable's elements every run holds (``Region.fixed``): constants, reading nothing."""
    if not fixed:
        return
    position = np.arange(abstract.kind.size).reshape(abstract.kind.shape) % max(item, 1)
    for pos, value in fixed.items():
        at = position == pos
        abstract.kind[at], abstract.reads[at] = KNOWN, 0
        abstract.lo[at] = abstract.hi[at] = value


def symbolic_key(ctx, region: Region, symbols, extra: tuple) -> tuple:
    """``region_key`` with the dims pattern of the anchor, the variable and every fed leaf."""
    tags: dict[str, tuple] = {region.variable: ("variable",)} if region.variable else {}
    tags.update((v, ("int", symbols.pattern(v))) for v in region.ints)  # sizes given as data
    fed: dict[int, tuple | None] = {id(n): None for n in region.folded}  # outputs are constant leaves
    fed.update((id(n), shape_tag(n, symbols.pattern(n.inputs[0]))) for n in region.shapes)
    head = (extra, ("anchor", symbols.pattern(symbols.anchor)),
            ("variable", symbols.pattern(region.variable), ctx.dtype(region.variable) if region.variable else None),
            ("ints", tuple(ctx.dtype(v) for v in region.ints)), ("fixed", tuple(sorted(region.fixed.items()))))
    return region_key(ctx, region.nodes, region.output, tags, fed, head)


def declared_lie(ctx, nodes, values: dict) -> str | None:
    """A declared static dim the region's values do not have: that value_info is not believed."""
    for node in nodes:
        for out in node.outputs:
            declared = ctx.shape(out) if out else None
            actual = np.shape(values[out]) if out in values else None
            if declared is None or actual is None or len(declared) != len(actual):
                continue
            if any(isinstance(d, int) and d != a for d, a in zip(declared, actual)):
                return (f"{out!r} is declared {list(declared)} but computes {list(actual)} at the probe's dims: "
                        "its declared shape is not the data's, and a size read from it would be wrong")
    return None
