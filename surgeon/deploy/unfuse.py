"""``unfuse``: write every custom node back as standard ONNX, with the plugins' ``to_standard``.

The rewrite driver does the work (names kept, shapes declared, every written node checked,
If/Loop bodies, one cleanup): a pattern anchored on custom nodes asks the plugin set for each.
A node its plugin cannot express at the opset is an error naming it; a node no plugin gives a
standard form stays, reported. ``opset`` other than the model's own converts the default
domain first with ``onnx.version_converter`` (standard nodes included); going down, the nodes it
cannot step down are lowered by hand (``lowering``), standard nodes of an op that starts later
are written by the plugin op equal to it where there is one (``carry``), and a node the target
cannot express (such an op with no plugin for it, a type it lacks) is an error naming it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from onnx import ModelProto

from .. import arguments, progress
from ..io import graphsurgeon
from .carry import Carried, carry_as_plugin_ops
from ..errors import SurgeonError
from ..graph import Node
from ..logs import log_lines
from ..io.load import check_model_argument, load_copy, remember_home
from ..io.save import save_model
from .opsets import convert, default_opset
from ..graph.prune import drop_unused
from ..rewrite.plugins import Origin, Plugin, PluginSet, resolve
from ..rewrite.driver import Driver
from ..rewrite.match import Match, Refusal
from ..rewrite.pattern import Pattern
from ..rewrite.report import Report
from ..runtime.schedule import ORT_DOMAINS

log = logging.getLogger("surgeon.unfuse")  # the name it has always logged under


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
           plugins=None, quiet: bool = False) -> UnfuseResult:
    """Rewrite every custom node whose plugin op has ``to_standard`` into standard ONNX at
    default-domain ``opset`` (default: the model's own; another converts the model first).
    ``model`` is a path, ModelProto or graphsurgeon Graph (never modified; ``fuse(...).model``
    too). With ``output``, the result is written atomically. ``quiet``: no progress on stderr."""
    check_model_argument(model)
    arguments.check_path(output, "output", optional=True)
    arguments.check_type(opset, int, "opset", "an int", optional=True)
    with progress.quieted(quiet):
        result = _unfuse(model, output, opset, plugins)
    log_lines(log, result.report.notes, [f"custom node {node} left: no plugin gives it a standard form"
                                         for node in result.left])
    return result


def _unfuse(model, output, opset, plugins) -> UnfuseResult:
    plugins = resolve(plugins)
    loaded = load_copy(graphsurgeon.as_model(model))
    proto = loaded.proto
    have = default_opset(proto)
    target = opset if opset is not None else have
    if target is None:
        raise SurgeonError("the model imports no default-domain opset; pass --opset")
    notes = []
    carried = carry_as_plugin_ops(proto, plugins, target) if have is not None and target < have else Carried()
    notes.extend(carried.notes)
    if target != have:
        lowered = convert(proto, target)
        notes.append(f"converted the model from opset {have} to {target} (onnx.version_converter)")
        notes.extend(lowered)
    pattern = _ToStandard(plugins, target)
    report = Driver(loaded, [Plugin(pattern, Origin("-", "-", "given"))]).run()
    report.kind = "unfuse"
    for entry in [*report.rewrites, *report.refusals]:  # named by the plugin that brings the op
        node = getattr(entry, "anchor_ref", None) or getattr(entry, "node_ref", None)
        entry.plugin = plugins.op_origin_label(node.domain, node.op_type) if node else ""
    failures = [m for m in report.refusals if m.node not in pattern.left]
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more node(s))" if len(failures) > 1 else ""
        why = pattern.failed.get(first.node, first.reason)
        if first.node in carried.labels:  # a standard node, written as the plugin op equal to it is
            was, op = carried.labels[first.node]
            raise SurgeonError(f"cannot write node {was} at opset {target} as {op} is written: {why}{more}")
        raise SurgeonError(f"cannot unfuse node {first.node} at opset {target}: {why}{more}")
    dropped = drop_unused(proto, pattern.unfused)
    report.notes = notes + [f"dropped the {d!r} opset import: no node of it is left" for d in dropped]
    if output is not None:
        save_model(loaded, output)
    remember_home(loaded)  # handed back: its external data is found again when it comes back
    return UnfuseResult(proto, report, target, list(plugins.warnings))
