"""What matching yields: a Match (the region, its outputs, what was found) or a Refusal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..graph import Node


@dataclass
class Refusal:
    """A near miss: the pattern recognised the anchor but will not rewrite it, and says why."""

    reason: str


def refuse(reason: str) -> Refusal:
    """Return this from ``match`` for a near miss: the report shows ``reason`` for the node."""
    return Refusal(reason)


@dataclass
class Match:
    """One occurrence of a pattern.

    ``nodes`` is the region that goes away; ``outputs`` are the values leaving it, which the
    rewrite must produce again under the same names (default: the anchor's outputs). Any other
    value the region computes must have no reader outside it. ``values`` carries what the
    pattern found (inputs, attributes) from ``match`` to ``rewrite``; ``warnings`` go to the
    report. ``atol``: the rewrite equals the original only to this absolute tolerance (an
    original that computes in half precision, say); it is written on the new nodes
    (``metadata_props`` ``surgeon.atol``) and ``validate`` holds the rewrite, and the outputs
    after it, to no less.
    """

    anchor: Node
    nodes: list[Node]
    outputs: list[str] | None = None
    values: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    atol: float | None = None

    def __post_init__(self) -> None:
        if self.outputs is None:
            self.outputs = [o for o in self.anchor.outputs if o]
