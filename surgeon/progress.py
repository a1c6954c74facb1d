"""Progress on stderr for work that can take more than a moment: a bar with a count where the
amount is known, else the seconds spent, on one line redrawn in place.

Shown only when stderr is a terminal, after the work has taken ``DELAY`` seconds (quick work stays
silent), and never with ``SURGEON_QUIET=1``, ``set_quiet()`` (the commands' ``--quiet``) or, for
one call, within ``quieted(True)`` (the library's ``quiet=True``). It never touches stdout.
Nested work reads ``outer > inner``. Usage::

    for node in progress.track(nodes, "matching"): ...
    with progress.task("validating", total=len(regions)) as t: ...; t.advance()
    with progress.working("loading the models"): ...load...()
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import sys
import threading
import time
from typing import Iterable, Iterator, TypeVar

from .reportfields import bytes_text
from .forksafe import after_fork_in_child

T = TypeVar("T")

DELAY = 1.0  # seconds before anything is shown ($SURGEON_PROGRESS_DELAY overrides)
TICK = 0.1  # seconds between redraws
BAR = 24  # cells in the bar
_quiet = False
# A library call's quiet=True: per thread and task (a context variable), so one caller's choice
# never silences another's.
_call_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("surgeon_quiet", default=False)


def set_quiet(quiet: bool = True) -> None:
    """No progress at all from now on, in the whole process (``--quiet``)."""
    global _quiet
    _quiet = quiet


@contextlib.contextmanager
def quieted(quiet: bool = True) -> Iterator[None]:
    """No progress within (``quiet=True`` of a library call); ``quiet=False`` changes nothing."""
    if not quiet:
        yield
        return
    token = _call_quiet.set(True)
    try:
        yield
    finally:
        _call_quiet.reset(token)


def enabled() -> bool:
    if _quiet or _call_quiet.get() or os.environ.get("SURGEON_QUIET", "") not in ("", "0"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


def _delay() -> float:
    try:
        return float(os.environ.get("SURGEON_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY


class Task:
    """One piece of work; ``advance(n)`` counts it. A no-op when progress is off."""

    def __init__(self, label: str, total: int | None = None, unit: str = ""):
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.start = 0.0
        self.active = False

    def advance(self, n: int = 1) -> None:
        self.done += n

    def __enter__(self) -> "Task":
        if enabled():
            self.start = time.monotonic()
            self.active = True
            _screen.push(self)
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            self.active = False
            _screen.pop(self)

    def text(self, now: float) -> str:
        seconds = f"{now - self.start:.1f}s"
        if not self.total:
            count = f" {_amount(self.done, self.unit)}" if self.done else ""
            return f"{self.label}{count} {seconds}"
        share = min(1.0, self.done / self.total)
        cells = int(share * BAR)
        bar = "#" * cells + "-" * (BAR - cells)
        return (f"{self.label} [{bar}] {share * 100:3.0f}% {_amount(self.done, self.unit)}/"
                f"{_amount(self.total, self.unit)} {seconds}")


def _amount(n: int, unit: str) -> str:
    return bytes_text(n) if unit == "B" else f"{n}{unit}"


class _Screen:
    """The one progress line: a stack of tasks drawn by a ticker thread while any is open."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stack: list[Task] = []
        self.shown = False
        self.thread: threading.Thread | None = None

    def push(self, task: Task) -> None:
        with self.lock:
            self.stack.append(task)
            self._draw()  # shown at once when the delay is 0, else by the ticker once it has passed
            if self.thread is None:
                self.thread = threading.Thread(target=self._tick, name="surgeon-progress", daemon=True)
                self.thread.start()

    def pop(self, task: Task) -> None:
        with self.lock:
            if task in self.stack:
                self.stack.remove(task)
            self._clear()
            self._draw()  # the outer task, if any, right away

    def _tick(self) -> None:
        while True:
            time.sleep(TICK)
            with self.lock:
                if not self.stack:
                    self._clear()
                    self.thread = None
                    return
                self._draw()

    def _draw(self) -> None:
        if not self.stack:
            return
        now = time.monotonic()
        if now - self.stack[0].start < _delay():
            return
        text = " > ".join(t.text(now) if t is self.stack[-1] else t.label for t in self.stack)
        width = shutil.get_terminal_size((100, 20)).columns - 1
        if len(text) > width:
            text = "…" + text[-(width - 1):]
        self._write("\r\x1b[K" + text)
        self.shown = True

    def _clear(self) -> None:
        if self.shown:
            self._write("\r\x1b[K")
            self.shown = False

    @staticmethod
    def _write(text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


_screen = _Screen()


def _after_fork_in_child() -> None:
    """A forked child has no ticker thread, and the lock may have been held by one: start afresh."""
    global _screen
    _screen = _Screen()


after_fork_in_child(_after_fork_in_child)


def task(label: str, total: int | None = None, unit: str = "") -> Task:
    """A context manager for work of ``total`` units (None: unknown, the seconds are shown)."""
    return Task(label, total, unit)


def working(label: str) -> Task:
    """Work whose amount is unknown (one long call): the seconds spent are shown."""
    return Task(label)


def track(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """Yields ``items``, counting them; the total is ``len(items)`` when it has one."""
    if not enabled():
        yield from items
        return
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with Task(label, total) as t:
        for item in items:
            yield item
            t.done += 1


def clear() -> None:
    """Erase the progress line before printing something else to stderr."""
    with _screen.lock:
        _screen._clear()
