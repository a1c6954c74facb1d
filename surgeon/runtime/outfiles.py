"""Writing outputs as ``DIR/<name>.npy``: names made safe for file systems, files written to a
temp file and renamed (io/atomic.py), so a reader never sees half an array."""

from __future__ import annotations

import hashlib
import os
import re

import numpy as np

from ..io.atomic import write_file
from ..errors import CannotWriteError, cannot_write

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_STEM = 120


def sanitise(name: str) -> str:
    """A file stem for a value name: safe characters only, no leading dot, not too long."""
    stem = _UNSAFE.sub("_", name)
    if not stem or stem.startswith("."):
        stem = "_" + stem
    if len(stem) > _MAX_STEM or stem != name:
        # different names may sanitise alike ("a/b", "a:b"): a short hash keeps them apart
        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
        stem = f"{stem[:_MAX_STEM]}-{digest}"
    return stem


def output_paths(folder: str, names: list[str]) -> dict[str, str]:
    paths, taken = {}, set()
    for name in names:
        stem = sanitise(name)
        candidate, k = stem, 1
        while candidate.lower() in taken:  # case-insensitive file systems
            k += 1
            candidate = f"{stem}_{k}"
        taken.add(candidate.lower())
        paths[name] = os.path.join(folder, candidate + ".npy")
    return paths


def save_array_atomic(path: str, value: np.ndarray) -> None:
    try:
        write_file(path, lambda f: np.save(f, value, allow_pickle=False))
    except OSError as exc:
        raise cannot_write(path, exc) from None


def write_outputs(folder: str, values: dict[str, np.ndarray]) -> dict[str, str]:
    """Write every value; returns ``{name: path}``. The folder is created when missing."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise CannotWriteError(f"--output-dir {folder}: exists and is not a folder", path=folder)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CannotWriteError(f"--output-dir {folder}: cannot create ({exc.strerror or exc})", path=folder) from None
    paths = output_paths(folder, list(values))
    for name, path in paths.items():
        save_array_atomic(path, np.asarray(values[name]))
    return paths
