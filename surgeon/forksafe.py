"""onnxruntime sessions that a forked child never frees.

A session's thread pool lives in the process that built it; in a ``fork`` child (multiprocessing's
default on Linux) destroying such a session blocks forever, and not only through surgeon's cache:
a runner caught in a reference cycle (an exception's traceback holds one) is garbage the child's
cycle collector frees. Each session is held by a ``ForkSafeSession`` that remembers its process;
freed in another one, it keeps the session alive for good instead (its memory is the parent's,
shared copy-on-write). The child builds its own sessions.
"""

from __future__ import annotations

import ctypes
import os


class ForkSafeSession:
    """An InferenceSession (``session``) and the process that built it; attributes pass through."""

    __slots__ = ("session", "pid")

    def __init__(self, session):
        self.session = session
        self.pid = os.getpid()

    def __getattr__(self, name):
        return getattr(self.session, name)

    def __del__(self):
        if os.getpid() != self.pid:  # a fork child: one reference never given back keeps it alive
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(self.session))


def keep_forever(objects) -> None:
    """Never free ``objects`` (a fork child's inherited runners: OpenVINO's compiled models, onnxruntime's sessions)."""
    for obj in objects:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def after_fork_in_child(hook):
    """Run ``hook`` in a forked child before anything else (a lock another thread of the parent
    held, a cache of sessions): the one place that registers it. Usable as a decorator."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=hook)
    return hook
