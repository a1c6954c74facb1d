"""Build the kernels' libraries on first use, cached by a hash of all that went in.

    python -m surgeon_ops.kernels.build [--cuda [sm_XY ...]]   # build ahead of time, print the paths

The CPU build (host C++ compiler: ``$CXX``, else g++, c++, clang++) makes one shared library
that runs on any CPU of this architecture: on x86-64 its kernels are compiled once per level
(baseline, x86-64-v3 = AVX2/FMA/F16C, x86-64-v4 = AVX-512) and the library picks one at run
time (csrc/cpu_isa.cpp; ``$SURGEON_CPU_LEVEL=x86-64`` or ``x86-64-v3`` forces a lower one).
The CUDA build (nvcc: ``$NVCC``, ``$CUDA_HOME/bin/nvcc``, ``nvcc`` on PATH,
``/usr/local/cuda/bin/nvcc``) runs only when asked for: a torch CUDA tensor reaches the
kernels, or :func:`build_cuda` is called.  Each build also leaves a position-independent static
archive of the same objects (:func:`build_cpu_archive`, :func:`build_cuda_archive`), which
engine plugins link (surgeon_ops.ort).

Extra C++ flags: ``$SURGEON_CXXFLAGS`` (part of the hash).
Cache: ``$SURGEON_CACHE_DIR/kernels/<hash>/`` (default ``~/.cache/surgeon/kernels/<hash>/``; an
unusable folder falls back to a private temp folder, see cache.py).
The hash covers the sources (this file's included), the compiler's identity and version, and
the flags; not the processor, since the build no longer depends on it.  A build compiles into a
temporary folder beside the target, says so in one line on stderr, and renames its outputs into
place, so concurrent processes never load a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .cache import cache_root

CSRC = Path(__file__).resolve().parent / "csrc"

X86 = platform.machine().lower() in ("x86_64", "amd64")
# Instruction-set levels: (namespace, flags), baseline first; must match csrc/cpu_isa.cpp.
# x86-64-v4 keeps pass 1 in 512-bit vectors (GCC prefers 256): a Sapphire Rapids class Xeon
# ran 1x3x512x512 in 0.57 ms instead of 0.66.
CPU_LEVELS = ((("x86_64", ("-march=x86-64",)), ("x86_64_v3", ("-march=x86-64-v3",)),
               ("x86_64_v4", ("-march=x86-64-v4", "-mprefer-vector-width=512")))
              if X86 else (("generic", ()),))
# Translation units: (file, flags, levels it is compiled for).  The fast paths need -O3
# (vectorised pass 1, 2.3x faster); the per-location code, full of instantiations, compiles
# twice as fast at -O2 (IEEE results are the same) and gains nothing from AVX-512.  The ABI,
# the level choice and the thread pool are compiled once, for the baseline.
_BASE = CPU_LEVELS[0][0]
CPU_UNITS = (("cpu_fast.cpp", ("-O3",), tuple(name for name, _ in CPU_LEVELS)),
             ("cpu_locations.cpp", ("-O2",), tuple(name for name, _ in CPU_LEVELS if name != "x86_64_v4")),
             ("cpu_kernels.cpp", ("-O2",), (_BASE,)),
             ("cpu_isa.cpp", ("-O2",), (_BASE,)),
             ("thread_pool.cpp", ("-O2",), (_BASE,)))
SHARED_HEADERS = ("grid_sample_math.h", "dispatch.h", "locations.h", "abi_checks.h", "surgeon_kernels.h", "isa.h")
CPU_SOURCES = tuple(u[0] for u in CPU_UNITS) + ("cpu_common.h", "cpu_level.h", "cpu_rows.h", "cpu_simd.h",
                                                 "cpu_bicubic.h", "cpu_avx512.h", "thread_pool.h") + SHARED_HEADERS
CUDA_SOURCES = ("cuda_kernels.cu",) + SHARED_HEADERS

# -ffp-contract=off / -fmad=false: only the explicit fmaf calls of the shared math may fuse,
# so the CPU and the GPU round alike (see grid_sample_math.h).  -fno-trapping-math lets the
# compiler evaluate both arms of a select, which the vectorised loops need; like
# -fno-math-errno it changes no result.  No -march here: that is per level.
CXX_FLAGS = ("-std=c++17", "-ffp-contract=off", "-fno-trapping-math", "-fno-math-errno", "-fPIC",
             "-fvisibility=hidden", "-pthread")
NVCC_FLAGS = ("-O3", "-std=c++17", "-fmad=false", "-Xcompiler", "-fPIC,-fvisibility=hidden,-ffp-contract=off")
DEFAULT_CUDA_ARCHS = ("sm_80", "sm_90")
COMPILE_TIMEOUT_S = 600


def shared_suffix() -> str:
    return {"darwin": ".dylib", "win32": ".dll", "cygwin": ".dll"}.get(sys.platform, ".so")


CPU_LIBRARY = "libsurgeon_kernels_cpu" + shared_suffix()
CUDA_LIBRARY = "libsurgeon_kernels_cuda" + shared_suffix()
CPU_ARCHIVE = "libsurgeon_kernels_cpu.a"
CUDA_ARCHIVE = "libsurgeon_kernels_cuda.a"


class KernelBuildError(RuntimeError):
    """A library could not be built (no compiler, or it failed); the message is one line."""


def cache_dir() -> Path:
    return cache_root() / "kernels"


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


def find_ar() -> str:
    """The static archiver: $AR, else ar, llvm-ar."""
    return _find_tool("AR", ["ar", "llvm-ar"], "archiver (ar)", "install binutils or set AR")


def tool_identity(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KernelBuildError(f"cannot run compiler {tool!r}: {exc}") from None
    return f"{os.path.realpath(tool)}\n{out.stdout}"


def digest(parts: list[str], files: list[Path]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:20]


def _run_all(cmds: list[list[str]]) -> list[subprocess.CompletedProcess]:
    """Runs the commands, as many at a time as there are CPUs (longest first is the caller's
    job); a missing or hung tool becomes a KernelBuildError."""
    jobs = max(2, os.cpu_count() or 1)
    procs: list[subprocess.Popen] = []
    results: list[subprocess.CompletedProcess | None] = [None] * len(cmds)

    def finish(i: int) -> None:
        out, err = procs[i].communicate(timeout=COMPILE_TIMEOUT_S)
        results[i] = subprocess.CompletedProcess(cmds[i], procs[i].returncode, out, err)

    try:
        for i, cmd in enumerate(cmds):
            if i >= jobs:
                finish(i - jobs)
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for i in range(max(0, len(cmds) - jobs), len(cmds)):
            finish(i)
        return results  # type: ignore[return-value]
    except (OSError, subprocess.TimeoutExpired) as exc:
        for proc in procs:
            proc.kill()
        raise KernelBuildError(f"cannot run the compiler: {exc}") from None


def compile_cached(steps_for, outputs: list[str], folder: Path, what: str, estimate: str) -> list[Path]:
    """Builds `outputs` into `folder` unless all are there.  steps_for(tmp, outs) gives a list
    of steps, each a list of commands run in parallel; the steps must write every path of
    `outs` (one per output, in tmp).  Says so on stderr while it compiles."""
    targets = [folder / name for name in outputs]
    if all(t.exists() for t in targets):
        return targets
    folder.mkdir(parents=True, exist_ok=True)
    print(f"surgeon: compiling the {what} (once, {estimate}; cached in {folder.parent})...", file=sys.stderr,
          flush=True)
    label = what.split()[0].lower()
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        outs = [Path(tmp) / name for name in outputs]
        start = time.perf_counter()
        log = []
        for cmds in steps_for(Path(tmp), outs):
            results = _run_all(cmds)
            log += [" ".join(r.args) + "\n" + r.stdout + r.stderr for r in results]
            failed = [r for r in results if r.returncode != 0]
            if failed:
                log_path = folder / f"build-{label}.log"
                log_path.write_text("\n".join(log))
                err = failed[0].stderr
                lines = [ln for ln in err.splitlines() if not ln.startswith("collect2")]
                first = next((ln for ln in lines if "error" in ln or "undefined reference" in ln), err.strip()[:200])
                raise KernelBuildError(f"compiling the {what} failed (exit {failed[0].returncode}): "
                                       f"{first.strip()} [log: {log_path}]")
        missing = [o.name for o in outs if not o.exists()]
        if missing:
            raise KernelBuildError(f"compiling the {what} produced no {', '.join(missing)}")
        seconds = time.perf_counter() - start
        (folder / f"build-{label}.txt").write_text("\n".join(log) + f"\nseconds: {seconds:.1f}\n")
        for out, target in zip(outs, targets):  # the loadable library last: its presence means done
            os.replace(out, target)  # atomic: a concurrent builder's identical file may win, fine
    return targets


def extra_cxx_flags() -> list[str]:
    """$SURGEON_CXXFLAGS, added last to every C++ compile."""
    return os.environ.get("SURGEON_CXXFLAGS", "").split()


def no_undefined_flags() -> list[str]:
    """Linker flags that make an unresolved symbol a build error, not a load-time one."""
    return [] if sys.platform == "darwin" else ["-Wl,--no-undefined"]


def _cpu_build() -> list[Path]:
    cxx, ar = find_cxx(), find_ar()
    flags_all = [*CXX_FLAGS, *extra_cxx_flags()]
    levels = dict(CPU_LEVELS)
    key = digest([tool_identity(cxx), " ".join(flags_all), repr(CPU_LEVELS), repr(CPU_UNITS), platform.machine(),
                  sys.platform], [Path(__file__), *(CSRC / name for name in CPU_SOURCES)])

    def steps(tmp: Path, outs: list[Path]) -> list[list[list[str]]]:
        archive, library = outs
        compiles, objects = [], []
        for name, opt, unit_levels in CPU_UNITS:
            for level in unit_levels:
                obj = tmp / f"{name}.{level}.o"
                objects.append((list(levels).index(level), str(obj)))
                compiles.append([cxx, *opt, *levels[level], f"-DSK_ISA={level}", *flags_all, "-I", str(CSRC), "-c",
                                 "-o", str(obj), str(CSRC / name)])
        # One relocatable object, the lowest level's objects first.  Standard-library templates
        # (std::vector<float>...) cannot live in the per-level namespaces: each level's objects
        # carry a copy, and the linker keeps the first one, which must run on every CPU.
        # Resolved here once, the archive's users cannot link the copies in another order.
        whole = str(tmp / "surgeon_kernels_cpu.o")
        partial = [cxx, "-r", "-nostdlib", "-o", whole, *[obj for _, obj in sorted(objects)]]
        link = [cxx, "-shared", "-pthread", *no_undefined_flags(), "-o", str(library), whole]
        return [compiles, [partial], [link, [ar, "rcs", str(archive), whole]]]

    return compile_cached(steps, [CPU_ARCHIVE, CPU_LIBRARY], cache_dir() / key, "CPU kernels",
                          "up to a minute")


def build_cpu() -> Path:
    """Path to the CPU library, compiling it first if the cache lacks it."""
    return _cpu_build()[1]


def build_cpu_archive() -> Path:
    """Path to the static archive of the same CPU kernels (all levels and the ABI), for other
    shared libraries to link: position-independent, hidden visibility but for the C ABI."""
    return _cpu_build()[0]


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


def _cuda_build(archs) -> list[Path]:
    nvcc, host, ar = find_nvcc(), find_cxx(), find_ar()
    arch_flags = cuda_arch_flags(archs or DEFAULT_CUDA_ARCHS)
    key = digest([tool_identity(nvcc), tool_identity(host), " ".join(NVCC_FLAGS), " ".join(arch_flags),
                  platform.machine(), sys.platform], [Path(__file__), *(CSRC / name for name in CUDA_SOURCES)])

    def steps(tmp: Path, outs: list[Path]) -> list[list[list[str]]]:
        archive, library = outs
        obj = str(tmp / "cuda_kernels.o")
        compile_ = [nvcc, *NVCC_FLAGS, *arch_flags, "-ccbin", host, "-I", str(CSRC), "-c", "-o", obj,
                    str(CSRC / "cuda_kernels.cu")]
        link = [nvcc, "-shared", "-ccbin", host, *arch_flags, "-o", str(library), obj]
        return [[compile_], [link, [ar, "rcs", str(archive), obj]]]

    return compile_cached(steps, [CUDA_ARCHIVE, CUDA_LIBRARY], cache_dir() / key, "CUDA kernels",
                          "about 20 s per GPU architecture")


def build_cuda(archs=None) -> Path:
    """Path to the CUDA library, compiled with nvcc for `archs` (e.g. ["sm_90"]; default
    sm_80 and sm_90) if not cached yet.  Needs no GPU."""
    return _cuda_build(archs)[1]


def build_cuda_archive(archs=None) -> Path:
    """Path to the static archive of the same CUDA kernels (host launchers and device code,
    no relocatable device code): link it with nvcc, which adds the CUDA runtime."""
    return _cuda_build(archs)[0]


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m surgeon_ops.kernels.build",
                                     description="Build the kernels ahead of time and print the libraries' paths.")
    parser.add_argument("--cuda", nargs="*", metavar="sm_XY", help="also the CUDA library (default archs: "
                        + " ".join(DEFAULT_CUDA_ARCHS) + ")")
    args = parser.parse_args(argv)
    try:
        print(build_cpu())
        if args.cuda is not None:
            print(build_cuda(args.cuda or None))
    except KernelBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
