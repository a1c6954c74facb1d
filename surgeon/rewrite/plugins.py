"""Finding patterns: the ``surgeon.patterns`` entry-point group (the built-ins use it too) and
``--plugin module:Name`` for ones not installed. A plugin that fails to load is named in a
warning; the others still load."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Iterable

from ..errors import SurgeonError
from .pattern import Pattern

GROUP = "surgeon.patterns"


@dataclass
class InstalledPattern:
    pattern: Pattern
    package: str
    version: str
    source: str  # entry point "name = module:attr" or "--plugin module:attr"
    enabled: bool = True


@dataclass
class Discovery:
    patterns: list[InstalledPattern] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _as_patterns(obj, where: str) -> list[Pattern]:
    """An entry point may name a Pattern subclass, an instance, a list of them, or a factory."""
    if inspect.isclass(obj) and issubclass(obj, Pattern):
        return [obj()]
    if isinstance(obj, Pattern):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [p for item in obj for p in _as_patterns(item, where)]
    if callable(obj):
        return _as_patterns(obj(), where)
    raise TypeError(f"{where} is a {type(obj).__name__}, not a Pattern")


def load_reference(spec: str) -> list[Pattern]:
    """``module:Name`` (or ``module`` with a ``PATTERNS`` list) -> patterns."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        return _as_patterns(getattr(module, attr or "PATTERNS"), spec)
    except Exception as exc:
        raise SurgeonError(f"--plugin {spec}: cannot load: {type(exc).__name__}: {exc}") from None


def discover(extra: Iterable[str] = ()) -> Discovery:
    found = Discovery()
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.dist.name if e.dist else "", e.name)):
        package = ep.dist.name if ep.dist else "?"
        version = ep.dist.version if ep.dist else "?"
        try:
            patterns = _as_patterns(ep.load(), ep.value)
        except Exception as exc:
            found.errors.append(
                f"plugin {ep.name!r} from package {package!r} failed to load: {type(exc).__name__}: {exc}")
            continue
        found.patterns.extend(InstalledPattern(p, package, version, f"{ep.name} = {ep.value}") for p in patterns)
    for spec in extra:
        module = spec.partition(":")[0]
        found.patterns.extend(InstalledPattern(p, module, "-", f"--plugin {spec}") for p in load_reference(spec))
    names = [p.pattern.name for p in found.patterns]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        found.errors.append(f"pattern name(s) {', '.join(dupes)} given by more than one plugin; the first is used")
        seen: set[str] = set()
        unique = []
        for p in found.patterns:
            if p.pattern.name not in seen:
                seen.add(p.pattern.name)
                unique.append(p)
        found.patterns = unique
    return found


def select(found: Discovery, only: Iterable[str] = (), skip: Iterable[str] = ()) -> list[Pattern]:
    """Mark patterns enabled per ``--only`` / ``--skip``; unknown names are errors."""
    only, skip = list(only), list(skip)
    known = {p.pattern.name for p in found.patterns}
    for name in only + skip:
        if name not in known:
            raise SurgeonError(f"no pattern named {name!r} (installed: {', '.join(sorted(known)) or 'none'})")
    for p in found.patterns:
        p.enabled = (not only or p.pattern.name in only) and p.pattern.name not in skip
    return [p.pattern for p in found.patterns if p.enabled]
