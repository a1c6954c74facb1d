"""A structural key for a cut grid region: equal keys mean the probe would see the same
computation (same ops, attributes, wiring, constant values and dim pattern), whatever the value
names. A model with 200 copies of one chain is probed once."""

from __future__ import annotations

import hashlib

import numpy as np

from surgeon import MatchContext

from .cut import Cut

_FULL_HASH_BYTES = 1 << 22  # past this, a strided sample and two sums stand for the content


def fingerprint(array: np.ndarray) -> tuple:
    a = np.require(array, requirements="C")  # keeps a scalar 0-d: its shape is part of the key
    if a.nbytes <= _FULL_HASH_BYTES:
        digest = hashlib.sha1(a.tobytes()).hexdigest()
    else:
        flat = a.reshape(-1)
        sample = flat[:: max(1, flat.size // 65536)]
        as64 = flat.astype(np.float64, copy=False)
        digest = (hashlib.sha1(sample.tobytes()).hexdigest(), float(as64.sum()),
                  float(np.dot(as64, np.sin(np.arange(flat.size)))))
    return (str(a.dtype), a.shape, digest)


def region_key(ctx: MatchContext, cut: Cut, symbols, image: str, extra: tuple) -> tuple:
    ids: dict[str, tuple] = {cut.theta: ("theta",)} if cut.theta else {}
    ids.update((v, ("int", symbols.pattern(v))) for v in cut.int_leaves)  # sizes given as data
    leaves = {id(n) for n in cut.shape_leaves}
    folded = {id(n) for n in cut.folded}

    def ref(value: str):
        if not value:
            return None
        if value not in ids:
            array = ctx.constant(value)
            if array is None:
                raise ValueError(f"region reads {value!r}, neither computed in it nor constant")
            ids[value] = ("const", fingerprint(array))
        return ids[value]

    items: list = [extra, ("image", symbols.pattern(image)),
                   ("theta", symbols.pattern(cut.theta), ctx.dtype(cut.theta) if cut.theta else None),
                   ("ints", tuple(ctx.dtype(v) for v in cut.int_leaves))]
    for node in cut.nodes:
        if id(node) in folded:
            continue  # its output is a constant leaf
        if id(node) in leaves:
            items.append(("shape-of", node.op_type, node.attr("start", 0), node.attr("end"),
                          symbols.pattern(node.inputs[0])))
        else:
            attrs = tuple(sorted((k, fingerprint(v) if isinstance(v, np.ndarray) else repr(v))
                                 for k, v in node.attrs.items()))
            items.append((node.domain or "", node.op_type, attrs, tuple(ref(i) for i in node.inputs)))
        for out in node.outputs:
            if out:
                ids[out] = ("value", len(ids))
    items.append(("grid", ref(cut.grid)))
    return tuple(items)
