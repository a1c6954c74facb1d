"""What every report shares: its schema version and kind, a node as fields, and byte counts in
words, one way for every message and page (``bytes_text``: ``512 B``, ``1.5 MB``), and a figure as
validation prints it (``figure``).

The reports of ``fuse``, ``inspect``, ``unfuse``, ``validate`` and ``lint`` all follow
``surgeon/schemas/report.schema.json`` (installed with the package; ``schema()`` reads it). A
field added keeps ``SCHEMA_VERSION``; one renamed, removed or given another meaning raises it.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib import resources

SCHEMA_VERSION = 1


def header(kind: str) -> dict:
    """The first fields of every report: ``{"schema_version": 1, "kind": kind}``."""
    return {"schema_version": SCHEMA_VERSION, "kind": kind}


@functools.cache
def schema() -> dict:
    """The JSON Schema every report follows."""
    return json.loads(resources.files("surgeon").joinpath("schemas", "report.schema.json").read_text("utf-8"))


@dataclass(frozen=True)
class NodeRef:
    """A node as a report names it: ``name`` ("" when the model gave none), ``op_type``,
    ``domain`` ("" for standard ONNX), ``graph`` (``main``, or a body's path such as
    ``main/loop.body``) and ``output`` (its first output, which names a node that has no name)."""

    name: str
    op_type: str
    domain: str = ""
    graph: str = "main"
    output: str = ""

    @property
    def label(self) -> str:
        """How the summaries write it: ``name (op)``, or ``op -> output`` for a nameless node."""
        op = f"{self.domain}::{self.op_type}" if self.domain not in ("", "ai.onnx") else self.op_type
        return f"{self.name} ({op})" if self.name else f"{op} -> {self.output or '?'}"

    def to_dict(self) -> dict:
        return {"name": self.name, "op_type": self.op_type, "domain": self.domain, "graph": self.graph,
                "output": self.output}

    @classmethod
    def of(cls, proto, graph: str = "main") -> "NodeRef":
        """From a NodeProto (or a ``surgeon.Node``: its ``proto``)."""
        proto = getattr(proto, "proto", proto)
        domain = "" if proto.domain == "ai.onnx" else proto.domain
        return cls(proto.name, proto.op_type, domain, graph, next((o for o in proto.output if o), ""))


def body_scope(scope: str, node, attr_name: str, k: int, count: int) -> str:
    """The path of a body graph (an ``If`` branch, a ``Loop`` body) inside ``scope``, as the
    reports write it: ``main/If_0.then_branch``; ``[k]`` for one of several graphs of one attribute."""
    return f"{scope}/{node.name or node.op_type}.{attr_name}" + (f"[{k}]" if count > 1 else "")


_DECIMAL_NAMES = ("B", "KB", "MB", "GB")  # reports, pages and progress (powers of 1024 all the same)
_IEC_NAMES = ("B", "KiB", "MiB", "GiB")  # memory limits, as --max-memory GiB takes them


def bytes_text(n: float, iec: bool = False) -> str:
    """``n`` bytes with the largest unit that keeps it at least 1 (GB at most); whole bytes, else
    one decimal. Negative counts (a rewrite that adds constants) keep their sign."""
    names = _IEC_NAMES if iec else _DECIMAL_NAMES
    for unit in names:
        if abs(n) < 1024 or unit == names[-1]:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable: the last unit always returns")


def figure(v) -> str:
    """A figure as validation prints it (messages and the table alike): 3 significant digits,
    "inf", or "-" for none."""
    if v is None:
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return f"{v:.3g}"
