"""The structural key of a cut grid region (``surgeon.recognise.region_key``): equal keys mean
the probe would see the same computation (same ops, attributes, wiring, constant values and dim
pattern), whatever the value names. A model with 200 copies of one chain is proved and probed
once."""

from __future__ import annotations

from surgeon import MatchContext
from surgeon.recognise import region_key as structure_key

from .cut import Cut


def region_key(ctx: MatchContext, cut: Cut, symbols, image: str, extra: tuple) -> tuple:
    leaves: dict[str, tuple] = {cut.theta: ("theta",)} if cut.theta else {}
    leaves.update((v, ("int", symbols.pattern(v))) for v in cut.int_leaves)  # sizes given as data
    fed: dict[int, tuple | None] = {id(n): None for n in cut.folded}  # outputs are constant leaves
    fed.update((id(n), ("shape-of", n.op_type, n.attr("start", 0), n.attr("end"), symbols.pattern(n.inputs[0])))
               for n in cut.shape_leaves)
    head = (extra, ("image", symbols.pattern(image)),
            ("theta", symbols.pattern(cut.theta), ctx.dtype(cut.theta) if cut.theta else None),
            ("ints", tuple(ctx.dtype(v) for v in cut.int_leaves)))
    return structure_key(ctx, cut.nodes, cut.grid, leaves, fed, head)
