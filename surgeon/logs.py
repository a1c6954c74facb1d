"""Notes and warnings through ``logging``, under the ``surgeon`` logger.

Each library call logs what its result also returns: notes at INFO, warnings at WARNING, on the
logger named for the job that made them (``surgeon.api``, ``surgeon.validate``,
``surgeon.plugins``, ``surgeon.unfuse``, ``surgeon.run``: names kept when their modules moved
into folders). The package logger has a ``NullHandler`` (set in ``surgeon/__init__.py``), so
nothing is printed unless the application configures logging; the command line prints what it always
printed, and configures none.
"""

from __future__ import annotations

import logging
from typing import Iterable


def log_lines(logger: logging.Logger, notes: Iterable[str] = (), warnings: Iterable[str] = ()) -> None:
    for note in notes:
        logger.info("%s", note)
    for warning in warnings:
        logger.warning("%s", warning)
