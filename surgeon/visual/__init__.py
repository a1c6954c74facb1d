"""The HTML report: one self-contained page (no network, no external scripts or fonts) showing a
fuse or inspect run (summary, every rewrite's region drawn before and after, every near miss with
the region it looked at) and a validation (error table, pictures of image-like outputs).

``render(report, validation)`` gives the page as text; ``write(path, ...)`` writes it atomically.
The drawings are laid out in the browser by dagre (vendor/, inlined into the page). The verdict
table ``validate`` prints is here too (``table.py``): the page shows the same columns.

Reads the reports it draws by their fields, never by importing them. May import: ``io/`` (the
atomic write), ``reportfields``.
"""

from __future__ import annotations

import os

from .page import render


def write(path: str | os.PathLike, report=None, validation=None, title: str | None = None,
          inputs: list[str] = ()) -> None:
    """Write the page atomically; ``inputs`` are files it must not land on (the models read)."""
    from ..io.save import write_text_atomic

    write_text_atomic(path, render(report, validation, title=title), list(inputs))


__all__ = ["render", "write"]
