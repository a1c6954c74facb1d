"""What ``validate`` found: a record per rewrite, a record per model output, and the verdict."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from ..reportfields import NodeRef, header
from .compare import Comparison
from ..visual.table import verdict_table


@dataclass
class RewriteCheck:
    """One rewrite's region run on the original's own activations, against the original values."""

    nodes: list[str]  # names of the custom nodes in the region
    ops: list[str]
    patterns: list[str]
    plugins: list[str] = field(default_factory=list)  # where each pattern came from ("" unknown)
    outputs: list[Comparison] = field(default_factory=list)
    error: str = ""  # the kernel or the region failed to run
    note: str = ""
    pictures: list = field(default_factory=list, repr=False)  # runtime.pictures.Picture; not in JSON
    rewritten: dict = field(default_factory=dict, repr=False)  # its values, for a second look; not in JSON
    refs: list[NodeRef] = field(default_factory=list, repr=False)  # the nodes as fields, for the JSON

    @property
    def passed(self) -> bool:
        return not self.error and all(c.passed for c in self.outputs)

    @property
    def label(self) -> str:
        plugins = self.plugins or [""] * len(self.nodes)
        parts = [f"{n!r} ({op}, pattern {p}{', plugin ' + g if g else ''})"
                 for n, op, p, g in zip(self.nodes, self.ops, self.patterns, plugins)]
        return "rewrite " + " + ".join(parts)

    def to_dict(self) -> dict:
        """Each node as fields (report.schema.json), with the pattern that wrote it and its plugin."""
        plugins = self.plugins or [""] * len(self.nodes)
        refs = self.refs or [NodeRef(n, op.rpartition("::")[2], op.rpartition("::")[0])
                             for n, op in zip(self.nodes, self.ops)]
        nodes = [{**ref.to_dict(), "pattern": p, "plugin": g} for ref, p, g in zip(refs, self.patterns, plugins)]
        return {"nodes": nodes, "outputs": [asdict(c) for c in self.outputs], "error": self.error,
                "note": self.note, "passed": self.passed}


@dataclass
class ValidationReport:
    rewrites: list[RewriteCheck] = field(default_factory=list)
    outputs: list[Comparison] = field(default_factory=list)
    inputs: list[dict] = field(default_factory=list)  # name, shape, dtype, source
    atol: float | None = None  # None: the per-dtype defaults
    rtol: float | None = None
    max_mismatch: float = 0.0
    device: str = "cpu"
    engine: str = ""  # what ran the rewritten model's custom ops
    error: str = ""  # the rewritten model as a whole failed to run
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds
    # For the HTML report, not in JSON: pictures of image-like outputs end to end, and each
    # model's path, node count and weight bytes ({"original": {...}, "rewritten": {...}}).
    pictures: list = field(default_factory=list, repr=False)
    models: dict = field(default_factory=dict, repr=False)
    far: "ValidationReport | None" = None  # the same checks on far draws (validate's second round)

    @property
    def passed(self) -> bool:
        return (not self.error and all(r.passed for r in self.rewrites)
                and bool(self.outputs) and all(o.passed for o in self.outputs)
                and (self.far is None or self.far.passed))

    def failures(self) -> list[str]:
        """One line per failure, naming the rewrite or output."""
        lines = []
        for r in self.rewrites:
            if r.error:
                lines.append(f"{r.label}: {r.error}")
            lines.extend(f"{r.label}: {c.describe()}" for c in r.outputs if not c.passed)
        if self.error:
            lines.append(f"end to end: {self.error}")
        lines.extend(f"end to end: {c.describe()}" for c in self.outputs if not c.passed)
        if self.far is not None:
            lines.extend(f"far draws: {line}" for line in self.far.failures())
        return lines

    def summary(self, limit: int = 12) -> str:
        """One screen: verdict, inputs, each rewrite, each output."""
        lines = [f"validation {'PASSED' if self.passed else 'FAILED'} on {self.device}; tolerance: "
                 f"{self.tolerance_text()}"]
        if self.engine:
            lines.append(f"engine: {self.engine}")
        sources = list(dict.fromkeys(i["source"] for i in self.inputs))
        for source in sources:
            group = [i for i in self.inputs if i["source"] == source]
            shown = ", ".join(f"{i['name']} {i['dtype']}{i['shape']}" for i in group[:4])
            more = f" (+{len(group) - 4} more)" if len(group) > 4 else ""
            lines.append(f"inputs ({source}): {shown}{more}")
        ok = sum(r.passed for r in self.rewrites)
        lines.append(f"rewrites: {ok} of {len(self.rewrites)} match the original on its own activations")
        lines.extend(verdict_table(self, limit))
        if self.far is not None:
            lines.append(f"far draws ({self.far.inputs[0]['source'] if self.far.inputs else 'drawn'}): "
                         + ("PASSED" if self.far.passed else "FAILED"))
            if not self.far.passed:
                lines.extend(f"  {line}" for line in self.far.failures()[:limit])
        lines.extend(f"note: {n}" for n in self.notes[:limit])
        lines.extend(f"note: {line}" for line in self.rounding_notes()[:limit])
        if self.timings:
            lines.append("time: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in self.timings.items()))
        return "\n".join(lines)

    def tolerance_text(self) -> str:
        """The tolerances in words (the summary's first line, the HTML report's)."""
        from .tolerance import ULPS_PER_OP

        if self.atol is None and self.rtol is None:
            return (f"each rewrite: exact float math ({ULPS_PER_OP} ulps per op, by the output's magnitude); end to "
                    "end: per dtype (float32 atol 1e-3, rtol 1e-3); beyond them, what rounding in the original "
                    "explains")
        return (f"atol {self.atol if self.atol is not None else 'default'}, "
                f"rtol {self.rtol if self.rtol is not None else 'default'}")

    def rounding_notes(self) -> list[str]:
        """One line per compared value with elements explained by rounding."""
        found = [(r.label, c) for r in self.rewrites for c in r.outputs if c.explained and c.passed]
        found += [("end to end", c) for c in self.outputs if c.explained and c.passed]
        return [f"{where}: {c.name!r}: {c.rounding_note()}" for where, c in found]

    def to_dict(self) -> dict:
        """Plain data (report.schema.json); ``far``: the same checks on far draws, or None."""
        return {**header("validate"), **self._round(), "far": self.far._round() if self.far is not None else None}

    def _round(self) -> dict:
        return {
            "passed": self.passed,
            "device": self.device,
            "engine": self.engine,
            "atol": self.atol,
            "rtol": self.rtol,
            "max_mismatch": self.max_mismatch,
            "inputs": self.inputs,
            "rewrites": [r.to_dict() for r in self.rewrites],
            "outputs": [asdict(c) for c in self.outputs],
            "error": self.error,
            "failures": self.failures(),
            "notes": self.notes,
            "timings": self.timings,
        }

    def to_json(self) -> str:
        return json.dumps(_finite(self.to_dict()), indent=2, allow_nan=False)

    def to_html(self, report=None, title: str | None = None) -> str:
        """One self-contained HTML page: the error table, pictures of image-like outputs, and with
        ``report`` (the fuse Report) every rewrite drawn."""
        from ..visual import render

        return render(report, self, title=title)


def describe_models(**runners) -> dict:
    """Path, node count and weight bytes of each model (for the HTML report's summary)."""
    from ..io.load import model_data_bytes
    from ..rewrite.driver import count_nodes

    return {key: {"path": r.loaded.path or "", "nodes": count_nodes(r.loaded.proto.graph),
                  "bytes": model_data_bytes(r.loaded)} for key, r in runners.items()}


def _finite(value):
    """JSON has no inf/NaN: write them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
