"""Compiling at test time: programs and stand-ins the tests build from the kernels' sources
(the installed package itself never compiles), and the project's CMake configure step with the
one error line it gives where something is missing.  The flags are the kernels' own, as
ops/kernels/CMakeLists.txt sets them (tests/kernels/test_installed.py checks they agree)."""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "ops" / "kernels" / "csrc"
X86 = platform.machine().lower() in ("x86_64", "amd64")
# SURGEON_KERNEL_CXX_FLAGS in ops/kernels/CMakeLists.txt (less -pthread, a link flag here too).
KERNEL_FLAGS = ("-ffp-contract=off", "-fno-trapping-math", "-fno-math-errno")
CXX_FLAGS = ("-std=c++17", *KERNEL_FLAGS, "-fPIC", "-fvisibility=hidden", "-pthread")


class ToolMissing(RuntimeError):
    pass


def find_cxx() -> str:
    """$CXX when set (and then only it), else g++, c++, clang++ on PATH."""
    for name in ([os.environ["CXX"]] if os.environ.get("CXX") else ["g++", "c++", "clang++"]):
        found = shutil.which(name)
        if found:
            return found
    raise ToolMissing("no C++ compiler found (tried $CXX, g++, c++, clang++)")


def find_nvcc() -> str | None:
    """nvcc where the build looks for it (cmake/SurgeonToolchain.cmake), or None."""
    for var in ("CUDACXX", "NVCC"):
        if os.environ.get(var):
            return shutil.which(os.environ[var])
    homes = [os.path.join(os.environ[v], "bin", "nvcc") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    for candidate in [*homes, "nvcc", "/usr/local/cuda/bin/nvcc"]:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def cmake_kernel_flags() -> tuple[str, ...]:
    """SURGEON_KERNEL_CXX_FLAGS as ops/kernels/CMakeLists.txt sets it."""
    text = (ROOT / "ops" / "kernels" / "CMakeLists.txt").read_text()
    return tuple(re.search(r"set\(SURGEON_KERNEL_CXX_FLAGS ([^)]*)\)", text).group(1).split())


def load_script(relative: str):
    """A build script of the tree (e.g. cmake/ort_headers.py) as a module."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def configure(tmp_path, env_changes: dict, *defines: str) -> subprocess.CompletedProcess:
    """CMake's configure step of the project (what pip's build runs first), in a new folder."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.fail("cmake is needed on PATH to test the build's configure step (apt-get install cmake)")
    env = {**os.environ, **env_changes}
    return subprocess.run([cmake, "-S", str(ROOT), "-B", str(tmp_path / "build"), "-DSURGEON_CUDA=OFF",
                           f"-DPython_EXECUTABLE={sys.executable}", *defines], env=env, capture_output=True,
                          text=True, timeout=300)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.startswith("surgeon build error: ")]
    assert len(lines) == 1, done.stderr
    assert "error:" not in done.stdout  # no compiler output
    return lines[0]
