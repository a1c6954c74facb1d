"""The contract's optional int64 `size` input, planned exactly as `surgeon fuse` plans it
(surgeon.rewrite.sizes.SizeWriter.pieces), so that a model exported with these ops holds the
nodes surgeon fuse would have written for the same model.

A size is a list of pieces, one per element of [N, C, *spatial]:
  ("const", value)           a static dim
  ("dim", key, source, axis) a dynamic dim read from `source`'s shape (key: identity of source)
  ("computed", handle)       anything else (H // 2, ...), a value the exporter already holds
Runs of constants become one int64 constant; runs of dims of one source one Gather of its
Shape, or the Shape itself when they are all its dims in order; several parts are concatenated.
"""

from __future__ import annotations


def is_static(pieces: list) -> bool:
    return all(p[0] == "const" for p in pieces)


def groups(pieces: list, rank_of) -> list[tuple]:
    """[("const", [values]) | ("shape", source) | ("gather", source, [axes]) | ("computed", handle)];
    rank_of(source) -> the source's rank."""
    runs: list[list] = []  # [kind, key, source, items]
    for p in pieces:
        if p[0] == "const":
            kind, key, source, item = "const", None, None, int(p[1])
        elif p[0] == "dim":
            kind, key, source, item = "dim", p[1], p[2], p[3]
        else:
            runs.append(["computed", None, p[1], None])
            continue
        if runs and runs[-1][0] == kind and kind != "computed" and runs[-1][1] == key:
            runs[-1][3].append(item)
        else:
            runs.append([kind, key, source, [item]])
    out = []
    for kind, _key, source, items in runs:
        if kind == "const":
            out.append(("const", items))
        elif kind == "computed":
            out.append(("computed", source))
        elif items == list(range(rank_of(source))):
            out.append(("shape", source))
        else:
            out.append(("gather", source, items))
    return out
