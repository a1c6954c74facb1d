"""What matching yields: a Match (the region, its outputs, what was found) or a Refusal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..graph import Node


NEAR_MISS = "near miss"
NOT_MINE = "not mine"
KINDS = (NEAR_MISS, NOT_MINE)


@dataclass
class Refusal:
    """A pattern's "no", with why and of which kind: a *near miss* (``NEAR_MISS``: the chain is
    one the pattern is for, and it will not rewrite it; the report lists it with ``reason``) or
    *not mine* (``NOT_MINE``: the anchor starts no chain of this pattern; only ``SURGEON_TRACE``
    shows it). Tell them apart by ``kind``, never by the reason's text."""

    reason: str
    kind: str = field(default=NEAR_MISS, kw_only=True)  # keyword-only: subclasses add fields after reason

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Refusal kind {self.kind!r}: known are {KINDS}")

    @property
    def near_miss(self) -> bool:
        return self.kind == NEAR_MISS


def refuse(reason: str) -> Refusal:
    """Return this from ``match`` for a near miss: the report shows ``reason`` for the node."""
    return Refusal(reason)


def not_mine(reason: str) -> Refusal:
    """Return this from ``match`` (or a ``Recogniser``'s identify) when the anchor is not this
    pattern's chain after all: nothing is reported; ``SURGEON_TRACE`` shows ``reason``."""
    return Refusal(reason, kind=NOT_MINE)


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
    after it, to no less. ``undefined_at``: input dims (``"x[2]"``) and the one size at which the
    original's values are undefined (0 / 0) and the rewrite's are not (``surgeon.undefined_at``):
    ``validate`` draws other sizes there unless told those. ``runs_at``: input dims and the one
    size the original runs at (sizes baked into its constants; the rewrite runs at any):
    ``validate`` draws that size there unless told another (``surgeon.runs_at``).
    """

    anchor: Node
    nodes: list[Node]
    outputs: list[str] | None = None
    values: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    atol: float | None = None
    undefined_at: dict[str, int] = field(default_factory=dict)
    runs_at: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.outputs is None:
            self.outputs = [o for o in self.anchor.outputs if o]
