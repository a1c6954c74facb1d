"""Writing output files atomically, with the permissions any tool's new file gets.

Each output is written to a temp file beside it (same folder: the rename is atomic), created
private (0600: nobody else reads a half-written file), given the mode a new file gets (0666
less the umask: 0644 under umask 022) and renamed into place.  ``Outputs`` does this for a
group of files that appear together or not at all."""

from __future__ import annotations

import os
import re
import tempfile
import threading
from typing import Callable, IO
from ..forksafe import after_fork_in_child

_umask_lock = threading.Lock()


def _after_fork_in_child() -> None:
    global _umask_lock
    _umask_lock = threading.Lock()  # another thread of the parent may have held it


after_fork_in_child(_after_fork_in_child)


def umask() -> int:
    """The process's umask, read without changing it where the OS tells it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            found = re.search(r"^Umask:\s*([0-7]+)$", f.read(), re.M)
        if found:
            return int(found.group(1), 8)
    except OSError:
        pass
    with _umask_lock:  # elsewhere: set and restore (a file another thread creates meanwhile gets 077)
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def new_file_mode() -> int:
    return 0o666 & ~umask()


def temp_beside(path: str) -> tuple[int, str]:
    """A new private file (0600) beside ``path``: (descriptor, its path)."""
    folder = os.path.dirname(os.path.abspath(path))
    return tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)


def publish(tmp: str, final: str) -> None:
    """Give ``tmp`` a new file's mode and rename it to ``final``."""
    os.chmod(tmp, new_file_mode())
    os.replace(tmp, final)


def _unlink(paths) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


class Outputs:
    """Files that appear together or not at all::

        with Outputs() as out:
            fd = out.new("model.onnx")   # a private temp file's descriptor (the caller closes it)
            ...
        # all renamed into place on a clean exit; on an exception, the temps (and any
        # already renamed) are removed

    OSError from commit() propagates, after the cleanup."""

    def __init__(self) -> None:
        self.staged: list[tuple[str, str]] = []  # (temp, final), renamed in this order
        self.placed: list[str] = []

    def new(self, final: str) -> int:
        fd, tmp = temp_beside(final)
        self.staged.append((tmp, final))
        return fd

    def open(self, final: str, text: bool = False) -> IO:
        """``new(final)`` as a file: "wb", or "w" in UTF-8 when text (what cannot be encoded is
        written escaped, never an error half way)."""
        mode = {"mode": "w", "encoding": "utf-8", "errors": "backslashreplace"} if text else {"mode": "wb"}
        return os.fdopen(self.new(final), **mode)

    def commit(self) -> None:
        for tmp, final in self.staged[len(self.placed):]:
            publish(tmp, final)
            self.placed.append(final)

    def __enter__(self) -> "Outputs":
        return self

    def __exit__(self, kind, value, tb) -> None:
        try:
            if kind is None:
                self.commit()
        finally:
            if len(self.placed) < len(self.staged):  # failed before or during the renames
                _unlink([tmp for tmp, _ in self.staged[len(self.placed):]] + self.placed)


def write_file(path: str, write: Callable[[IO], None], text: bool = False) -> None:
    """One file, atomically: ``write(f)`` fills it (f opened "wb", or "w" in UTF-8 when text)."""
    with Outputs() as out, out.open(path, text) as f:
        write(f)
