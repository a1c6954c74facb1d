"""Where built libraries and fetched headers are cached: ``$SURGEON_CACHE_DIR``, else
``~/.cache/surgeon``.  A folder that cannot be used (a file is in the way, no permission to
write, a read-only file system) is not the end: builds go to a private folder under the
system's temp dir instead, and one line on stderr says so and what to do."""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile
from pathlib import Path


def wanted_root() -> Path:
    root = os.environ.get("SURGEON_CACHE_DIR")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "surgeon"


def cache_root() -> Path:
    return _usable(str(wanted_root()))


@functools.lru_cache(maxsize=None)  # one check (and at most one notice) per folder and process
def _usable(root: str) -> Path:
    problem = _problem(Path(root))
    if problem is None:
        return Path(root)
    fallback = _private_temp()
    print(f"warning: cache folder {root} {problem}; caching in {fallback} instead "
          f"(set SURGEON_CACHE_DIR to a writable folder to keep builds)", file=sys.stderr, flush=True)
    return fallback


def _problem(root: Path) -> str | None:
    try:
        root.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "is not a folder"
    except OSError as exc:
        return f"cannot be created ({exc.strerror or exc})"
    if not root.is_dir():
        return "is not a folder"
    if not os.access(root, os.W_OK | os.X_OK):
        return "is not writable"
    return None


def _private_temp() -> Path:
    """``<tmp>/surgeon-cache-<uid>`` when it is ours alone (kept across runs), else a fresh
    private folder: a shared temp dir may hold a planted folder or link of that name."""
    path = Path(tempfile.gettempdir()) / f"surgeon-cache-{os.getuid() if hasattr(os, 'getuid') else 0}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and (not hasattr(os, "getuid") or st.st_uid == os.getuid()) \
                and stat.S_IMODE(st.st_mode) & 0o077 == 0:
            return path
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="surgeon-cache-"))
