"""Work that may abort the process, run in a forked child. onnx's C++ shape inference checks its
own assumptions with assertions that abort on some malformed graphs (a Slice of an axis that an
input too small for a convolution's kernel made negative: ``std::clamp`` with hi < lo), which no
Python exception catches; onnxruntime runs the same inference when it loads such a model, and
aborts too. A child that aborts takes only itself down, and the caller hears of it
(``Aborted``) and can say so before anything loads the model in this process. A fork costs
10-20 ms whatever the process holds (page tables are copied, not memory); where there is no
fork (Windows), the work runs in this process."""

from __future__ import annotations

import faulthandler
import os
from collections.abc import Callable


class Aborted(Exception):
    """The work killed the process it ran in (the signal's number)."""


def run_isolated(work: Callable[[], bytes]) -> bytes | None:
    """``work()``'s bytes, or None when it raised; ``Aborted`` when it killed its process."""
    if not hasattr(os, "fork"):
        try:
            return work()
        except Exception:
            return None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, send the result, leave without running any of the parent's exit code
        status = 1
        try:
            os.close(read)
            quiet = os.open(os.devnull, os.O_WRONLY)  # an assertion's own message is the parent's to give
            os.dup2(quiet, 2)
            faulthandler.disable()  # a fault handler the parent set would print this child's abort
            view = memoryview(work())
            while view:
                view = view[os.write(write, view):]
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as pipe:
        while chunk := pipe.read(1 << 20):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise Aborted(os.WTERMSIG(status))
    return b"".join(chunks) if os.WEXITSTATUS(status) == 0 else None
