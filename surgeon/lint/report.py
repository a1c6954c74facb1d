"""A lint's findings: one hazard per node and rule, as lines for people and JSON for tools."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ..reportfields import header


@dataclass
class Hazard:
    rule: str  # e.g. "trt-mode-name"
    node: str  # the node's name (or "(model)" for the whole model)
    op_type: str
    domain: str
    what: str  # what the engine will do
    fix: str  # what to do about it (often a surgeon command)
    graph: str = "main"  # the graph holding the node ("main" or the body's path)

    def line(self) -> str:
        op = f"{self.domain}::{self.op_type}" if self.domain not in ("", "ai.onnx") else self.op_type
        where = "" if self.graph == "main" else f" [{self.graph}]"
        return f"{self.node}{f' ({op})' if op else ''}{where}: {self.what}; fix: {self.fix} [{self.rule}]"


@dataclass
class LintReport:
    target: str
    model: str = ""  # the path linted, "" for a model given in memory
    hazards: list[Hazard] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why

    @property
    def clean(self) -> bool:
        return not self.hazards

    def lines(self) -> list[str]:
        return [h.line() for h in self.hazards]

    def summary(self) -> str:
        head = (f"{self.target}: no hazards" if self.clean
                else f"{self.target}: {len(self.hazards)} hazard(s)")
        return "\n".join([head, *self.lines(), *(f"note: {n}" for n in self.notes)])

    def to_dict(self) -> dict:
        return {**header("lint"), "target": self.target, "model": self.model, "clean": self.clean,
                "hazards": [asdict(h) for h in self.hazards], "notes": list(self.notes)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)
