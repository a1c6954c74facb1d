"""A structural key for a region: equal keys mean the same computation (ops, attributes, wiring,
constant values, what the leaves are), whatever the value names. A model with 200 copies of a
chain is proved and probed once."""

from __future__ import annotations

import hashlib

import numpy as np

_CHUNK = 1 << 24  # bytes hashed at a time: a memory-mapped constant is read, never copied whole


def fingerprint(array: np.ndarray) -> tuple:
    """Every byte counts: two tables that differ anywhere (an infinity in one) never share a
    verdict. Hashed in place, chunk by chunk."""
    a = np.require(array, requirements="C")  # keeps a scalar 0-d: its shape is part of the key
    flat = a.reshape(-1).view(np.uint8) if a.size else np.zeros(0, np.uint8)
    digest = hashlib.blake2b(digest_size=20)
    for start in range(0, flat.size, _CHUNK):
        digest.update(memoryview(flat[start:start + _CHUNK]))
    return (str(a.dtype), a.shape, digest.hexdigest())


def shape_tag(node, dims, *extra) -> tuple:
    """The key's tag for a fed ``Shape``/``Size`` node: what it reads of a tensor with ``dims``
    (a dims pattern, or concrete dims), and anything else the caller tells apart by."""
    return ("shape-of", node.op_type, node.attr("start", 0), node.attr("end"), dims, *extra)


def region_key(ctx, nodes, output: str, leaves: dict[str, tuple], fed: dict[int, tuple] | None = None,
               extra: tuple = ()) -> tuple:
    """``leaves``: value -> a tag saying what the leaf is (the variable, a size given as data:
    anything hashable); ``fed``: id(node) -> a tag for nodes whose outputs are fed rather than
    computed (a ``Shape`` of a run-time tensor, with its dims pattern), or None to skip a node
    whose output is a constant leaf. Every other value a node reads must be computed in the
    region or be a constant (``ValueError`` otherwise)."""
    ids: dict[str, tuple] = dict(leaves)
    fed = fed or {}

    def ref(value: str):
        if not value:
            return None
        if value not in ids:
            array = ctx.constant(value)
            if array is None:
                raise ValueError(f"region reads {value!r}, neither computed in it nor constant")
            ids[value] = ("const", fingerprint(array))
        return ids[value]

    items: list = [extra]
    for node in nodes:
        if id(node) in fed:
            if fed[id(node)] is not None:
                items.append(fed[id(node)])
        else:
            attrs = tuple(sorted((k, fingerprint(v) if isinstance(v, np.ndarray) else repr(v))
                                 for k, v in node.attrs.items()))
            items.append((node.domain or "", node.op_type, attrs, tuple(ref(i) for i in node.inputs)))
        for out in node.outputs:
            if out:
                ids[out] = ("value", len(ids))
    items.append(("output", ref(output)))
    return tuple(items)
