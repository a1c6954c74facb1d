"""What a pattern plugin is: how it finds its chain, checks it, and what it writes instead."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

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
    report.
    """

    anchor: Node
    nodes: list[Node]
    outputs: list[str] | None = None
    values: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.outputs is None:
            self.outputs = [o for o in self.anchor.outputs if o]


# A reference kernel: (inputs as numpy arrays or None, attributes as plain values) -> outputs.
Kernel = Callable[..., Any]


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


class Pattern:
    """Base class for pattern plugins. Subclass it and fill in what applies.

    - ``name``: what ``--only`` / ``--skip`` and reports use (default: the class name in kebab case).
    - ``anchor_ops``: op types that can end a match, as ``"Op"`` or ``"domain::Op"``; the driver
      only offers these nodes to ``match`` (``None``: every node).
    - ``template``: optionally, a function over ``op.X(...)`` describing the chain (see
      ``surgeon.rewrite.template``); the default ``match`` uses it.
    - ``domains``: opset versions of the custom domains the pattern writes, added to the model.
    - ``kernels``: reference kernels for the ops it writes, ``{(domain, op_type): fn}``, with
      ``fn(inputs, attrs, device="cpu") -> list of arrays``; ``validate`` and ``run`` use them.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    anchor_ops: ClassVar[tuple[str, ...] | None] = None
    template: ClassVar[Callable | None] = None
    domains: ClassVar[dict[str, int]] = {}
    kernels: ClassVar[dict[tuple[str, str], Kernel]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = _kebab(cls.__name__)

    def match(self, ctx, node: Node) -> Match | Refusal | None:
        """Recognise the chain ending at ``node``: a Match, a Refusal (near miss) or None."""
        if self.template is None:
            raise NotImplementedError(f"pattern {self.name!r} defines neither match() nor template")
        from .template import match_template

        return match_template(self, ctx, node)

    def check(self, ctx, match: Match) -> str | None:
        """Last word before rewriting: a reason to refuse, or None."""
        return None

    def rewrite(self, ctx, match: Match) -> None:
        """Add the replacement nodes with ``ctx.add_node``; they must produce ``match.outputs``."""
        raise NotImplementedError(f"pattern {self.name!r} does not implement rewrite()")

    def accepts(self, node: Node) -> bool:
        """Whether ``node`` may end a match. The driver only offers nodes of ``anchor_types()``:
        an override can narrow that, not widen it."""
        anchors = self.anchor_types()
        if anchors is None:
            return True
        domain = "" if node.domain == "ai.onnx" else node.domain
        return (domain, node.op_type) in anchors

    def anchor_types(self) -> set[tuple[str, str]] | None:
        """``{(domain, op_type)}`` of the nodes that may end a match; None for every node."""
        if "_anchors" not in self.__dict__:
            self.__dict__["_anchors"] = self._anchor_set()
        return self.__dict__["_anchors"]

    def _anchor_set(self):
        specs = self.anchor_ops
        if specs is None and self.template is not None:
            from .template import trace  # a template's last op is its anchor

            try:
                last = trace(self.template).anchor
            except Exception:  # a malformed template: match() reports it as a refusal
                return None
            specs = (f"{last.domain}::{last.op_type}" if last.domain else last.op_type,)
        if specs is None:
            return None
        anchors = set()
        for spec in specs:
            domain, _, op = spec.rpartition("::")
            anchors.add(("" if domain == "ai.onnx" else domain, op))
        return anchors
