"""What a fuse run did: every rewrite, every refusal with its reason, and the totals."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field


@dataclass
class Rewrite:
    pattern: str
    anchor: str
    graph: str
    replaced: list[str]  # op types of the nodes that went away
    written: list[str]  # "domain::Op name" of the nodes written instead
    warnings: list[str] = field(default_factory=list)


@dataclass
class NearMiss:
    pattern: str
    node: str
    graph: str
    reason: str


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

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def summary(self, limit: int = 12) -> str:
        """One screen: counts first, then the first rewrites and near misses."""
        verb = "would rewrite" if self.dry_run else "rewrote"
        by_pattern = Counter(r.pattern for r in self.rewrites)
        lines = [
            f"{verb} {len(self.rewrites)} chain(s)"
            + (f" ({', '.join(f'{p}: {n}' for p, n in sorted(by_pattern.items()))})" if by_pattern else "")
            + f": {self.nodes_before} -> {self.nodes_after} nodes, constants removed: "
            f"{_bytes(self.constant_bytes_removed)}",
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


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
