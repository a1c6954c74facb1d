"""Rewrites that compute the same thing: one structure, one check on scale draws.

2,000 copies of a block fused the same way are one rewrite as far as drawn inputs go: the same
ops, attributes and wiring, the same constants, inputs of the same shapes drawn the same way. The
scale draws (scaled.py) run one of each and give the others its verdict. Anything the key cannot
tell apart for sure (a body's own value names, a constant not at hand) makes the rewrite its own.
"""

from __future__ import annotations

import hashlib

import numpy as np
from onnx import NodeProto

from ..graph.index import proto_reads


def structure_key(nodes: list[NodeProto], produces: list[str], values: dict, drawn: set[str]) -> bytes:
    """A digest of what ``nodes`` compute from their inputs: the drawn ones by shape and type,
    every other input by its value (``values``); ``produces`` by position."""
    digest = hashlib.blake2b(digest_size=20)
    ids: dict[str, bytes] = {}

    def ref(name: str) -> bytes:
        if not name:
            return b"-"
        if name not in ids:
            if name not in values:
                return repr(("unknown", name)).encode()  # tells this rewrite apart from any other
            a = np.asarray(values[name])
            head = repr((a.dtype.str, a.shape)).encode()
            ids[name] = b"drawn" + head if name in drawn else b"value" + head + hashlib.blake2b(
                np.ascontiguousarray(a).tobytes(), digest_size=16).digest()
        return ids[name]

    for node in nodes:
        bare = NodeProto()
        bare.CopyFrom(node)
        bare.name = bare.doc_string = ""
        del bare.metadata_props[:], bare.input[:], bare.output[:]
        digest.update(bare.SerializeToString(deterministic=True))
        digest.update(b"|".join(ref(r) for r in proto_reads(node)))
        for out in node.output:
            ids.setdefault(out, b"made%d" % len(ids))
            digest.update(ids[out])
    digest.update(b"|".join(ref(p) for p in produces))
    return digest.digest()
