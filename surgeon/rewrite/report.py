"""What a fuse run did: every rewrite, every refusal with its reason, and the totals.

The text fields (``anchor``, ``node``, ``written``...) are for people; the JSON names each node
by its fields (``NodeRef``: name, op type, domain, graph, first output) and follows
``surgeon/schemas/report.schema.json``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from json.encoder import encode_basestring_ascii as _quote
from dataclasses import dataclass, field

from ..reportfields import bytes_text
from ..reportfields import NodeRef, header
from .gcpause import cyclic_gc_paused


class _Unplain(Exception):
    """A value ``_indented`` leaves to the json module."""


def _float_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _indented(value, out: list, newline: str) -> None:
    """``json.dumps(value, indent=2)``'s text for plain data (dicts with str keys, lists, str,
    int, float, bool, None), appended to ``out``; ``newline``: a line break and the indent of
    the level ``value`` starts at. Raises _Unplain for anything else."""
    kind = type(value)
    if kind is str:
        out.append(_quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float:
        out.append(_float_text(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        try:  # a dict of strings (a node's fields): one join
            items = [_quote(key) + ": " + _quote(item) for key, item in value.items()]
        except TypeError:  # a value (or key) that is not a str
            items = None
        if items is not None:
            out.append("{" + inner + ("," + inner).join(items) + newline + "}")
            return
        separator = "{" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _Unplain
            out.append(separator)
            out.append(_quote(key))
            if type(item) is str:  # most values: no call
                out.append(": " + _quote(item))
            else:
                out.append(": ")
                _indented(item, out, inner)
            separator = "," + inner
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _indented(item, out, inner)
            separator = "," + inner
        out.append(newline + "]")
    else:
        raise _Unplain


def to_json(data) -> str:
    """``json.dumps(data, indent=2)``, the same text: the json module writes indented text in
    pure Python, a generator per level, which took longer than the whole rewrite of 5,000
    matches; plain data (what reports hold) is written here in one pass. Anything else, and a
    structure that holds itself, goes to the json module as before."""
    out: list[str] = []
    try:
        with cyclic_gc_paused():  # a string per value: collections would walk the report again and again
            _indented(data, out, "\n")
    except (_Unplain, RecursionError):
        return json.dumps(data, indent=2)
    return "".join(out)


@dataclass
class Rewrite:
    pattern: str
    anchor: str  # the anchor's label: "name (op)"
    graph: str
    replaced: list[str]  # op types of the nodes that went away
    written: list[str]  # "domain::Op name" of the nodes written instead
    warnings: list[str] = field(default_factory=list)
    plugin: str = ""  # where the pattern came from (plugins.Plugin.label)
    # What the HTML report draws (surgeon/rewrite/capture.py): {"before": region, "after": region,
    # "outputs": [value names]}; not in to_json() unless asked (to_dict(regions=True)).
    region: dict | None = field(default=None, repr=False)
    # The same nodes as fields, for the JSON: the anchor, the nodes replaced, the nodes written.
    anchor_ref: NodeRef | None = field(default=None, repr=False)
    replaced_refs: list[NodeRef] = field(default_factory=list, repr=False)
    written_refs: list[NodeRef] = field(default_factory=list, repr=False)

    def to_dict(self, regions: bool = False) -> dict:
        data = {"pattern": self.pattern, "plugin": self.plugin, "graph": self.graph,
                "anchor": (self.anchor_ref or NodeRef(self.anchor, "", graph=self.graph)).to_dict(),
                "replaced": [r.to_dict() for r in self.replaced_refs]
                or [NodeRef("", op, graph=self.graph).to_dict() for op in self.replaced],
                "written": [r.to_dict() for r in self.written_refs]
                or [NodeRef(text, "", graph=self.graph).to_dict() for text in self.written],
                "warnings": list(self.warnings)}
        if regions:
            data["region"] = self.region
        return data


@dataclass
class NearMiss:
    pattern: str
    node: str  # the node's label: "name (op)"
    graph: str
    reason: str
    plugin: str = ""
    # The region the pattern looked at: the candidate match when there was one ("matched"),
    # else the anchor and the nodes feeding it ("neighbourhood").
    region: dict | None = field(default=None, repr=False)
    region_kind: str = field(default="", repr=False)
    node_ref: NodeRef | None = field(default=None, repr=False)  # the node as fields, for the JSON

    def to_dict(self, regions: bool = False) -> dict:
        data = {"pattern": self.pattern, "plugin": self.plugin, "graph": self.graph,
                "node": (self.node_ref or NodeRef(self.node, "", graph=self.graph)).to_dict(), "reason": self.reason}
        if regions:
            data["region"], data["region_kind"] = self.region, self.region_kind
        return data


@dataclass
class Report:
    """What a fuse run did: the patterns used, every rewrite, every near miss with its reason,
    node and constant-byte totals. ``summary()`` for people, ``to_json()`` for tools."""

    patterns: list[str] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    refusals: list[NearMiss] = field(default_factory=list)
    nodes_before: int = 0
    nodes_after: int = 0
    constant_bytes_removed: int = 0
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)
    model: str = ""  # the input's path, or "" for a model given in memory
    passes: int = 0  # passes over the main graph (the last finds nothing new)
    seconds: float = 0.0  # time the rewrite took (loading and writing excluded)
    bytes_before: int = 0  # weights and constants in the model, before and after
    bytes_after: int = 0
    kind: str = ""  # the report's kind in JSON: "unfuse" when unfuse made it, else fuse or inspect

    def to_dict(self, regions: bool = False) -> dict:
        """Plain data (report.schema.json); ``regions=True`` adds what the HTML report draws for
        each rewrite and near miss (``region``)."""
        return {**header(self.kind or ("inspect" if self.dry_run else "fuse")),
                "model": self.model, "dry_run": self.dry_run, "patterns": list(self.patterns),
                "rewrites": [r.to_dict(regions) for r in self.rewrites],
                "refusals": [m.to_dict(regions) for m in self.refusals],
                "nodes_before": self.nodes_before, "nodes_after": self.nodes_after,
                "constant_bytes_removed": self.constant_bytes_removed, "bytes_before": self.bytes_before,
                "bytes_after": self.bytes_after, "passes": self.passes, "seconds": self.seconds,
                "notes": list(self.notes)}

    def to_json(self) -> str:
        with cyclic_gc_paused():  # fresh dicts and lists, no cycles (the data of 5,000 rewrites)
            data = self.to_dict()
        return to_json(data)

    def to_html(self, validation=None, title: str | None = None) -> str:
        """One self-contained HTML page: summary, every rewrite drawn before and after, every near
        miss; with ``validation`` (a ValidationReport) its error table and output pictures."""
        from ..visual import render

        return render(self, validation, title=title)

    def summary(self, limit: int = 12) -> str:
        """One screen: counts first, then the first rewrites and near misses."""
        verb = "would rewrite" if self.dry_run else "rewrote"
        by_pattern = Counter(r.pattern for r in self.rewrites)
        lines = [
            f"{verb} {len(self.rewrites)} chain(s)"
            + (f" ({', '.join(f'{p}: {n}' for p, n in sorted(by_pattern.items()))})" if by_pattern else "")
            + f": {self.nodes_before} -> {self.nodes_after} nodes, constants removed: "
            f"{bytes_text(self.constant_bytes_removed)}",
            f"refused {len(self.refusals)} near miss(es)",
        ]
        for r in self.rewrites[:limit]:
            where = "" if r.graph == "main" else f" [{r.graph}]"
            lines.append(f"  + {r.pattern}: {r.anchor}{where} -> {', '.join(r.written) or '(nothing)'}")
            lines.extend(f"    ! {w}" for w in r.warnings)
        if len(self.rewrites) > limit:
            lines.append(f"  ... {len(self.rewrites) - limit} more rewrite(s) (see --report)")
        for m in self.refusals[:limit]:
            where = "" if m.graph == "main" else f" [{m.graph}]"
            lines.append(f"  - {m.pattern}: {m.node}{where}: {m.reason}")
        if len(self.refusals) > limit:
            lines.append(f"  ... {len(self.refusals) - limit} more near miss(es) (see --report)")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)
