"""The compiled libraries, as the install built them (CMakeLists.txt; nothing is compiled at run
time): each lies in its Python package's folder, surgeon_ops/kernels or surgeon_ops/ort.  An
editable install (`pip install -e .`) keeps the Python files in the source tree and installs
the libraries into site-packages; the package's ``__path__`` lists both, so every folder of it
is looked in."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HOW_TO_BUILD = "reinstall surgeon (`pip install .` or `pip install -e .` compiles it; a wheel ships it)"
HOW_TO_BUILD_CUDA = ("the CUDA variants are built only when nvcc is found at install time: reinstall surgeon "
                     "with the CUDA toolkit there (nvcc on PATH, $CUDA_HOME or /usr/local/cuda)")


class LibraryNotInstalled(RuntimeError):
    """A compiled library the install should have placed is not there; the message is one line."""


def shared_suffix() -> str:
    return {"darwin": ".dylib", "win32": ".dll", "cygwin": ".dll"}.get(sys.platform, ".so")


def library_name(stem: str) -> str:
    """"surgeon_kernels_cpu" -> "libsurgeon_kernels_cpu.so" (.dylib, .dll)."""
    return f"lib{stem}{shared_suffix()}"


def find(package: str, stem: str, hint: str = HOW_TO_BUILD) -> Path:
    """The installed library `stem` of `package`, or LibraryNotInstalled naming what to do."""
    name = library_name(stem)
    folders = [Path(p) for p in importlib.import_module(package).__path__]
    for folder in folders:
        if (folder / name).is_file():
            return folder / name
    raise LibraryNotInstalled(f"{name} is not installed in {package} ({', '.join(map(str, folders))}); {hint}")
