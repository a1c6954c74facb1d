"""``unfuse``: write every custom node back as standard ONNX, with the plugins' ``to_standard``.

The rewrite driver does the work (names kept, shapes declared, every written node checked,
If/Loop bodies, one cleanup): a pattern anchored on custom nodes asks the plugin set for each.
A node its plugin cannot express at the opset is an error naming it; a node no plugin gives a
standard form stays, reported. ``opset`` other than the model's own converts the default
domain first with ``onnx.version_converter`` (standard nodes included); going down, the nodes it
cannot step down are lowered by hand (``lowering``), and a node the target cannot express (an op
that starts later, a type it lacks) is an error naming it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from onnx import ModelProto

from . import graphsurgeon
from .errors import SurgeonError
from .graph import Node
from .modelio import load_copy
from .modelsave import save_model
from .opsets import convert, default_opset, drop_unused
from .plugins import Origin, Plugin, PluginSet, resolve
from .rewrite.driver import Driver
from .rewrite.match import Match, Refusal
from .rewrite.pattern import Pattern
from .rewrite.report import Report
from .runtime.plan import ORT_DOMAINS


@dataclass
class UnfuseResult:
    """What ``unfuse`` returns: the standard ``model``, the driver's ``report`` (one rewrite
    per custom node; custom nodes left for want of a standard form are its near misses), the
    ``opset`` written and plugin-loading ``warnings``."""

    model: ModelProto
    report: Report
    opset: int
    warnings: list[str]

    @property
    def left(self) -> list[str]:
        """Custom nodes still in the model (no plugin brings a standard form for them)."""
        return [m.node for m in self.report.refusals]

    def summary(self) -> str:
        r = self.report
        lines = [f"unfused {len(r.rewrites)} custom node(s) at opset {self.opset}: "
                 f"{r.nodes_before} -> {r.nodes_after} nodes"]
        lines += [f"  + {w.anchor}{'' if w.graph == 'main' else f' [{w.graph}]'} -> {len(w.written)} node(s)"
                  for w in r.rewrites[:12]]
        if len(r.rewrites) > 12:
            lines.append(f"  ... {len(r.rewrites) - 12} more")
        lines += [f"  - left {m.node}: {m.reason}" for m in r.refusals]
        lines += [f"note: {n}" for n in r.notes]
        return "\n".join(lines)


class _Unexpressible(Exception):
    pass


class _ToStandard(Pattern):
    """Anchored on every node outside the standard and runtime domains; rewrites it with its
    CustomOp's ``to_standard``."""

    name = "unfuse"
    anchor_ops = None

    def __init__(self, plugins: PluginSet, opset: int):
        self.plugins, self.opset = plugins, opset
        self.failed: dict[str, str] = {}  # node label -> why it cannot be written (an error)
        self.left: set[str] = set()  # labels of nodes with no standard form (they stay)
        self.unfused: set[tuple[str, str]] = set()

    def match(self, ctx, node: Node):
        if node.domain in ORT_DOMAINS:
            return None
        op = self.plugins.op(node.domain, node.op_type)
        if op is None or op.to_standard is None:
            self.left.add(node.label)
            whose = "no plugin brings" if op is None else f"the plugin for {op.label} brings no"
            return Refusal(f"{whose} standard form for it")
        return Match(anchor=node, nodes=[node], outputs=[o for o in node.outputs if o], values={"op": op})

    def rewrite(self, ctx, match: Match) -> None:
        node, op = match.anchor, match.values["op"]
        try:
            reason = op.to_standard(ctx, node, self.opset)
        except Exception as exc:
            text = str(exc).strip().splitlines()
            reason = f"{op.label} to_standard raised {type(exc).__name__}: {text[0] if text else ''}"
            self.failed[node.label] = reason
            raise
        if reason:
            self.failed[node.label] = reason
            raise _Unexpressible(reason)
        self.unfused.add((node.domain, node.op_type))


def unfuse(model, output: str | os.PathLike | None = None, *, opset: int | None = None,
           plugins=None) -> UnfuseResult:
    """Rewrite every custom node whose plugin op has ``to_standard`` into standard ONNX at
    default-domain ``opset`` (default: the model's own; another converts the model first).
    ``model`` is a path, ModelProto or graphsurgeon Graph (never modified). With ``output``,
    the result is written atomically."""
    plugins = resolve(plugins)
    loaded = load_copy(graphsurgeon.as_model(model))
    proto = loaded.proto
    have = default_opset(proto)
    target = opset if opset is not None else have
    if target is None:
        raise SurgeonError("the model imports no default-domain opset; pass --opset")
    notes = []
    if target != have:
        lowered = convert(proto, target)
        notes.append(f"converted the model from opset {have} to {target} (onnx.version_converter)")
        notes.extend(lowered)
    pattern = _ToStandard(plugins, target)
    report = Driver(loaded, [Plugin(pattern, Origin("-", "-", "given"))]).run()
    failures = [m for m in report.refusals if m.node not in pattern.left]
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more node(s))" if len(failures) > 1 else ""
        raise SurgeonError(f"cannot unfuse node {first.node} at opset {target}: "
                           f"{pattern.failed.get(first.node, first.reason)}{more}")
    dropped = drop_unused(proto, pattern.unfused)
    report.notes = notes + [f"dropped the {d!r} opset import: no node of it is left" for d in dropped]
    if output is not None:
        save_model(loaded, output)
    return UnfuseResult(proto, report, target, list(plugins.warnings))
