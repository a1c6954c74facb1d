"""Build the kernels' shared libraries on first use, cached by a hash of all that went in.

The CPU library is compiled with the host C++ compiler (``$CXX``, else g++, c++, clang++)
with ``-march=native``; the CUDA library with nvcc (``$NVCC``, ``$CUDA_HOME/bin/nvcc``,
``nvcc`` on PATH, ``/usr/local/cuda/bin/nvcc``) only when asked for: a torch CUDA tensor
reaches the kernels, or :func:`build_cuda` is called.

Extra C++ flags: ``$SURGEON_CXXFLAGS`` (part of the hash).
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

SHARED_HEADERS = ("grid_sample_math.h", "dispatch.h", "locations.h", "abi_checks.h", "surgeon_kernels.h")
# The CPU library's translation units, compiled in parallel, each with its own flags: the
# fast paths need -O3 (vectorised pass 1, 2.3x faster); the ABI and per-location code,
# full of instantiations, compiles twice as fast at -O2 (IEEE results are the same).
# On x86-64, pass 1 may use 512-bit vectors where the CPU has them (GCC prefers 256): a
# Sapphire Rapids class Xeon ran 1x3x512x512 in 0.57 ms instead of 0.66.
_X86 = platform.machine().lower() in ("x86_64", "amd64")
CPU_UNITS = (("cpu_fast.cpp", ("-O3",) + (("-mprefer-vector-width=512",) if _X86 else ())),
             ("cpu_kernels.cpp", ("-O2",)))
CPU_SOURCES = ("cpu_fast.cpp", "cpu_kernels.cpp", "cpu_common.h", "cpu_rows.h", "cpu_simd.h",
               "cpu_avx512.h", "thread_pool.h") + SHARED_HEADERS
CUDA_SOURCES = ("cuda_kernels.cu",) + SHARED_HEADERS

CPU_LIBRARY = "libsurgeon_kernels_cpu.so"
CUDA_LIBRARY = "libsurgeon_kernels_cuda.so"

# -ffp-contract=off / -fmad=false: only the explicit fmaf calls of the shared math may fuse,
# so the CPU and the GPU round alike (see grid_sample_math.h).  -fno-trapping-math lets the
# compiler evaluate both arms of a select, which the vectorised loops need; like
# -fno-math-errno it changes no result.
CXX_FLAGS = ("-march=native", "-std=c++17", "-ffp-contract=off", "-fno-trapping-math",
             "-fno-math-errno", "-fPIC", "-fvisibility=hidden", "-pthread")
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


def _find_tool(env: str, candidates: list[str], what: str, install: str) -> str:
    """$ENV when set (and then only it), else the first candidate found."""
    wanted = os.environ.get(env)
    if wanted:
        found = _which(wanted)
        if not found:
            raise KernelBuildError(f"{what} ${env}={wanted!r} not found; {install}")
        return found
    for name in candidates:
        found = _which(name)
        if found:
            return found
    raise KernelBuildError(f"no {what} found (tried ${env}, {', '.join(candidates)}); {install}")


def find_cxx() -> str:
    """The host C++ compiler: $CXX when set (and then only it), else g++, c++, clang++."""
    return _find_tool("CXX", ["g++", "c++", "clang++"], "C++ compiler", "install g++ or set CXX")


def find_nvcc() -> str:
    """nvcc: $NVCC, $CUDA_HOME/bin/nvcc, nvcc on PATH, /usr/local/cuda/bin/nvcc."""
    homes = [os.path.join(os.environ[v], "bin", "nvcc") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    return _find_tool("NVCC", homes + ["nvcc", "/usr/local/cuda/bin/nvcc"], "CUDA compiler",
                      "install the CUDA toolkit or set NVCC")


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


def _run_all(cmds: list[list[str]]) -> list[subprocess.CompletedProcess]:
    """Runs the commands in parallel; a missing or hung tool becomes a KernelBuildError."""
    procs = []
    try:
        for cmd in cmds:
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        results = []
        for cmd, proc in zip(cmds, procs):
            out, err = proc.communicate(timeout=COMPILE_TIMEOUT_S)
            results.append(subprocess.CompletedProcess(cmd, proc.returncode, out, err))
        return results
    except (OSError, subprocess.TimeoutExpired) as exc:
        for proc in procs:
            proc.kill()
        raise KernelBuildError(f"cannot run the compiler: {exc}") from None


def _compile(steps_for, library: str, key: str, what: str) -> Path:
    """Builds `library` into the cache folder `key`.  steps_for(tmp, out) gives a list of
    steps, each a list of commands run in parallel; the last step must write `out`."""
    target = cache_dir() / key / library
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        out = Path(tmp) / library
        start = time.perf_counter()
        log = []
        for cmds in steps_for(Path(tmp), out):
            results = _run_all(cmds)
            log += [" ".join(r.args) + "\n" + r.stdout + r.stderr for r in results]
            failed = [r for r in results if r.returncode != 0]
            if failed:
                log_path = target.parent / f"build-{what.lower()}.log"
                log_path.write_text("\n".join(log))
                err = failed[0].stderr
                first = next((ln for ln in err.splitlines() if "error" in ln), err.strip()[:200])
                raise KernelBuildError(f"compiling the {what} kernels failed (exit {failed[0].returncode}): "
                                       f"{first.strip()} [log: {log_path}]")
        if not out.exists():
            raise KernelBuildError(f"compiling the {what} kernels produced no {library}")
        seconds = time.perf_counter() - start
        (target.parent / f"build-{what.lower()}.txt").write_text("\n".join(log) + f"\nseconds: {seconds:.1f}\n")
        os.replace(out, target)  # atomic: a concurrent builder's identical file may win, fine
    return target


def extra_cxx_flags() -> list[str]:
    """$SURGEON_CXXFLAGS, added last: e.g. -mno-avx512f builds the AVX2 path on an AVX-512
    machine (the tests do), -march=x86-64-v2 a library for older CPUs."""
    return os.environ.get("SURGEON_CXXFLAGS", "").split()


def build_cpu() -> Path:
    """Path to the CPU library, compiling it first if this machine's cache lacks it."""
    cxx = find_cxx()
    flags_all = [*CXX_FLAGS, *extra_cxx_flags()]
    key = _digest([_tool_identity(cxx), " ".join(flags_all), repr(CPU_UNITS), platform.machine(), _cpu_identity()],
                  CPU_SOURCES)

    def steps(tmp: Path, out: Path) -> list[list[list[str]]]:
        objects = [tmp / (name + ".o") for name, _ in CPU_UNITS]
        compile_units = [[cxx, *flags, *flags_all, "-I", str(CSRC), "-c", "-o", str(obj), str(CSRC / name)]
                         for (name, flags), obj in zip(CPU_UNITS, objects)]
        link = [[cxx, "-shared", "-pthread", "-o", str(out), *map(str, objects)]]
        return [compile_units, link]

    return _compile(steps, CPU_LIBRARY, key, "CPU")


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

    def steps(tmp: Path, out: Path) -> list[list[list[str]]]:
        return [[[nvcc, *NVCC_FLAGS, *arch_flags, "-ccbin", host, "-I", str(CSRC), "-o", str(out),
                  str(CSRC / "cuda_kernels.cu")]]]

    return _compile(steps, CUDA_LIBRARY, key, "CUDA")
