"""Reference kernels for custom ops, keyed by (domain, op_type).

A kernel is ``fn(inputs, attrs, device="cpu") -> list of arrays``: ``inputs`` are numpy arrays
(None for an absent optional input), ``attrs`` plain Python values. Whoever brings a custom op
brings its kernel: explicit ``register_kernel`` calls, and the ``kernels`` attribute of every
pattern plugin (installed ones found through the entry-point group, ``--plugin`` ones on demand).
Explicit registrations win over pattern-provided ones.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable

from ..errors import SurgeonError

Kernel = Callable[..., Any]

_lock = threading.Lock()
_explicit: dict[tuple[str, str], Kernel] = {}
_from_patterns: dict[tuple[str, str], tuple[Kernel, str]] = {}  # key -> (kernel, pattern name)
_loaded_specs: set[str] = set()  # "" stands for the installed entry points
_warnings: list[str] = []
_generation = 0  # bumped on every change: cached runners compiled against older kernels go stale


def generation() -> int:
    return _generation


def _bump() -> None:
    global _generation
    _generation += 1


def _key(domain: str, op_type: str) -> tuple[str, str]:
    return (domain or "", op_type)


def register_kernel(domain: str, op_type: str, fn: Kernel) -> None:
    """Run ``domain::op_type`` nodes with ``fn``; replaces an earlier registration."""
    if not callable(fn):
        raise SurgeonError(f"kernel for {domain}::{op_type} is a {type(fn).__name__}, not a function")
    with _lock:
        _explicit[_key(domain, op_type)] = fn
        _bump()


def unregister_kernel(domain: str, op_type: str) -> None:
    """Forget an explicit registration (pattern-provided kernels stay)."""
    with _lock:
        if _explicit.pop(_key(domain, op_type), None) is not None:
            _bump()


def find_kernel(domain: str, op_type: str, plugins: Iterable[str] = ()) -> Kernel | None:
    """The kernel for ``domain::op_type``, loading pattern plugins the first time one is asked for."""
    key = _key(domain, op_type)
    load_plugin_kernels(plugins)
    if key in _explicit:
        return _explicit[key]
    if key not in _from_patterns:
        load_plugin_kernels(None)  # the installed plugins, once
    if key in _explicit:
        return _explicit[key]
    entry = _from_patterns.get(key)
    return entry[0] if entry else None


def plugin_warnings() -> list[str]:
    """Plugins that failed to load while looking for kernels (the others still count)."""
    return list(_warnings)


def _add_pattern_kernels(pattern) -> None:
    kernels = dict(getattr(pattern, "kernels", None) or {})
    kernels.update({op.key: op.kernel for op in getattr(pattern, "ops", ()) if op.kernel is not None})
    if not isinstance(kernels, dict):
        _warnings.append(f"pattern {getattr(pattern, 'name', '?')!r}: 'kernels' is not a dict; ignored")
        return
    for key, fn in kernels.items():
        if not (isinstance(key, tuple) and len(key) == 2 and callable(fn)):
            _warnings.append(f"pattern {pattern.name!r}: kernel entry {key!r} is not ((domain, op), fn); ignored")
            continue
        _from_patterns.setdefault(_key(*key), (fn, pattern.name))  # first plugin wins, as for patterns


def load_plugin_kernels(plugins: Iterable[str] | None) -> None:
    """Register the kernels of installed patterns (``None``) or of ``--plugin`` specs (each once).

    A ``--plugin`` spec that cannot be loaded is an error (the user named it); an installed
    plugin that fails to load becomes a warning.
    """
    from ..rewrite.plugins import discover, load_reference  # the engine's own discovery

    specs = [""] if plugins is None else [s for s in plugins if s]
    for spec in specs:
        if spec in _loaded_specs:
            continue
        with _lock:
            if spec in _loaded_specs:
                continue
            if spec:
                for pattern in load_reference(spec):
                    _add_pattern_kernels(pattern)
            else:
                found = discover(())
                _warnings.extend(found.errors)
                for installed in found.patterns:
                    _add_pattern_kernels(installed.pattern)
            _loaded_specs.add(spec)  # adding kernels never changes one a runner already uses: no _bump
