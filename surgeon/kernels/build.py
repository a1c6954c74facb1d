"""Build the kernels' shared libraries on first use, cached by a hash of all that went in.

The CPU library is compiled with the host C++ compiler (``$CXX``, else g++, c++, clang++)
with ``-march=native``; the CUDA library with nvcc (``$NVCC``, ``$CUDA_HOME/bin/nvcc``,
``nvcc`` on PATH, ``/usr/local/cuda/bin/nvcc``) only when asked for: a torch CUDA tensor
reaches the kernels, or :func:`build_cuda` is called.

Cache: ``$SURGEON_CACHE_DIR/kernels/<hash>/`` (default ``~/.cache/surgeon/kernels/<hash>/``).
The hash covers the sources, the compiler's identity and version, the flags, and for the CPU
build the processor (``-march=native`` code is only valid on a like machine).  A build
compiles into a temporary folder beside the target and renames the library into place, so
concurrent processes never load a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CSRC = Path(__file__).resolve().parent / "csrc"

SHARED_HEADERS = ("grid_sample_math.h", "locations.h", "abi_checks.h", "surgeon_kernels.h")
CPU_SOURCES = ("cpu_kernels.cpp", "cpu_rows.h", "cpu_simd.h", "thread_pool.h") + SHARED_HEADERS
CUDA_SOURCES = ("cuda_kernels.cu",) + SHARED_HEADERS

CPU_LIBRARY = "libsurgeon_kernels_cpu.so"
CUDA_LIBRARY = "libsurgeon_kernels_cuda.so"

# -ffp-contract=off / -fmad=false: only the explicit fmaf calls of the shared math may fuse,
# so the CPU and the GPU round alike (see grid_sample_math.h).  -fno-trapping-math lets the
# compiler evaluate both arms of a select, which the vectorised loops need; like
# -fno-math-errno it changes no result.
CXX_FLAGS = ("-O3", "-march=native", "-std=c++17", "-ffp-contract=off", "-fno-trapping-math",
             "-fno-math-errno", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread")
NVCC_FLAGS = ("-O3", "-std=c++17", "-fmad=false", "-shared", "-Xcompiler",
              "-fPIC,-fvisibility=hidden,-ffp-contract=off")
DEFAULT_CUDA_ARCHS = ("sm_80", "sm_90")
COMPILE_TIMEOUT_S = 600


class KernelBuildError(RuntimeError):
    """The kernels' shared library could not be built (no compiler, or it failed)."""


def cache_dir() -> Path:
    root = os.environ.get("SURGEON_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "surgeon"
    return base / "kernels"


def _which(name: str) -> str | None:
    return shutil.which(name) or (name if os.path.isfile(name) and os.access(name, os.X_OK) else None)


def find_cxx() -> str:
    """The host C++ compiler: $CXX when set (and then only it), else g++, c++, clang++."""
    wanted = os.environ.get("CXX")
    if wanted:
        found = _which(wanted)
        if not found:
            raise KernelBuildError(f"C++ compiler $CXX={wanted!r} not found; install g++ or point CXX at a compiler")
        return found
    for name in ("g++", "c++", "clang++"):
        found = _which(name)
        if found:
            return found
    raise KernelBuildError("no C++ compiler found (tried $CXX, g++, c++, clang++); install g++ or set CXX")


def find_nvcc() -> str:
    """nvcc: $NVCC, $CUDA_HOME/bin/nvcc, nvcc on PATH, /usr/local/cuda/bin/nvcc."""
    wanted = os.environ.get("NVCC")
    if wanted:
        found = _which(wanted)
        if not found:
            raise KernelBuildError(f"CUDA compiler $NVCC={wanted!r} not found")
        return found
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "bin", "nvcc"))
    candidates += ["nvcc", "/usr/local/cuda/bin/nvcc"]
    for name in candidates:
        found = _which(name)
        if found:
            return found
    raise KernelBuildError("nvcc not found (tried $NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin); install the CUDA toolkit")


def _tool_identity(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KernelBuildError(f"cannot run compiler {tool!r}: {exc}") from None
    return f"{os.path.realpath(tool)}\n{out.stdout}"


def _cpu_identity() -> str:
    # -march=native code runs only on a like processor: key the cache on its features.
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [ln for ln in f if ln.startswith(("flags", "model name", "Features", "CPU part"))]
        return "".join(dict.fromkeys(lines))
    except OSError:
        return platform.processor()


def _digest(parts: list[str], sources: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    for name in sources:
        h.update(name.encode())
        h.update((CSRC / name).read_bytes())
    return h.hexdigest()[:20]


def _compile(cmd_for, library: str, key: str, what: str) -> Path:
    target = cache_dir() / key / library
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        out = Path(tmp) / library
        cmd = cmd_for(out)
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelBuildError(f"compiling the {what} kernels failed: {exc}") from None
        seconds = time.perf_counter() - start
        if proc.returncode != 0 or not out.exists():
            log = target.parent / f"build-{what.lower()}.log"
            log.write_text(" ".join(cmd) + "\n\n" + proc.stdout + proc.stderr)
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
            raise KernelBuildError(f"compiling the {what} kernels failed (exit {proc.returncode}): {first.strip()} [log: {log}]")
        (target.parent / f"build-{what.lower()}.txt").write_text(f"{' '.join(cmd)}\nseconds: {seconds:.1f}\n")
        os.replace(out, target)  # atomic: a concurrent builder's identical file may win, fine
    return target


def build_cpu() -> Path:
    """Path to the CPU library, compiling it first if this machine's cache lacks it."""
    cxx = find_cxx()
    key = _digest([_tool_identity(cxx), " ".join(CXX_FLAGS), platform.machine(), _cpu_identity()], CPU_SOURCES)

    def cmd(out: Path) -> list[str]:
        return [cxx, *CXX_FLAGS, "-I", str(CSRC), "-o", str(out), str(CSRC / "cpu_kernels.cpp")]

    return _compile(cmd, CPU_LIBRARY, key, "CPU")


def cuda_arch_flags(archs) -> list[str]:
    """-gencode flags: SASS for each sm_XY, plus PTX of the newest for later GPUs."""
    nums = sorted({str(a).lower().removeprefix("sm_").removeprefix("compute_").replace(".", "") for a in archs}, key=int)
    if not nums:
        raise ValueError("no CUDA architecture given")
    flags = []
    for n in nums:
        flags += ["-gencode", f"arch=compute_{n},code=sm_{n}"]
    flags += ["-gencode", f"arch=compute_{nums[-1]},code=compute_{nums[-1]}"]
    return flags


def build_cuda(archs=None) -> Path:
    """Path to the CUDA library, compiled with nvcc for `archs` (e.g. ["sm_90"]; default
    sm_80 and sm_90) if not cached yet.  Needs no GPU."""
    nvcc = find_nvcc()
    host = find_cxx()
    arch_flags = cuda_arch_flags(archs or DEFAULT_CUDA_ARCHS)
    key = _digest([_tool_identity(nvcc), _tool_identity(host), " ".join(NVCC_FLAGS), " ".join(arch_flags),
                   platform.machine()], CUDA_SOURCES)

    def cmd(out: Path) -> list[str]:
        return [nvcc, *NVCC_FLAGS, *arch_flags, "-ccbin", host, "-I", str(CSRC), "-o", str(out),
                str(CSRC / "cuda_kernels.cu")]

    return _compile(cmd, CUDA_LIBRARY, key, "CUDA")
