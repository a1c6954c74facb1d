"""Where the external data of a model surgeon handed back in memory lives.

``fuse(...).model`` of a model whose weights stay in external data still points at them, by
locations relative to the input's folder; a ModelProto knows no folder, and takes neither
attributes nor weak references. So each such model surgeon returns is remembered here, by
identity, with that folder, and every entry point given a model in memory looks it up
(``modelio.load_model_proto``): ``run``, ``validate``, ``unfuse``, ``inspect``, ``fuse`` and
``save`` take ``result.model`` as they take a path, and the weights are still read only where
needed.

An entry holds its model, so its identity cannot pass to another model while listed; once
nothing but the entry holds it (CPython's reference count says so) it is dropped at the next
look-up. Only the graph is held that way: the weights stay in their file.
"""

from __future__ import annotations

import sys
import threading

from onnx import ModelProto
from ..forksafe import after_fork_in_child

_entries: dict[int, tuple[ModelProto, str]] = {}
_lock = threading.Lock()


def _holders(entry: tuple) -> int:
    return sys.getrefcount(entry[0])


# What _holders counts for a model only an entry holds (the entry, the call's own references).
_ALONE = _holders((ModelProto(), ""))


def remember(proto: ModelProto, folder: str) -> None:
    """``proto``'s external data is relative to ``folder`` (an absolute path)."""
    with _lock:
        _sweep()
        _entries[id(proto)] = (proto, folder)


def folder_of(proto: ModelProto) -> str | None:
    """The folder ``proto``'s external data is relative to, when surgeon handed it back; else None."""
    with _lock:
        _sweep()
        entry = _entries.get(id(proto))
    return entry[1] if entry is not None and entry[0] is proto else None


def _sweep() -> None:
    for key in [k for k, entry in _entries.items() if _holders(entry) <= _ALONE]:
        del _entries[key]


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # another thread of the parent may have held it


after_fork_in_child(_after_fork_in_child)


def count() -> int:
    """How many models are remembered (for tests: an entry must not outlive its model)."""
    with _lock:
        _sweep()
        return len(_entries)
