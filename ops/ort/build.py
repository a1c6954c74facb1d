"""Compiles the onnxruntime op library (csrc/) against the kernels' static archives, cached
beside the kernels by a hash of everything that went in.

CPU: the host C++ compiler, linking the CPU kernels' archive.  CUDA: the same ops plus their
CUDA-provider kernels, compiled and linked with nvcc against both archives (no GPU needed to
build).  The library exports RegisterCustomOps alone: the archives' symbols stay inside, so it
cannot clash with the kernels' own shared library (or anything else) in one process.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from surgeon_ops.kernels import build as kbuild

from . import headers

CSRC = Path(__file__).resolve().parent / "csrc"
SOURCES = ("attrs.cpp", "shapes.cpp", "op.cpp", "launch_cpu.cpp", "register.cpp")
CUDA_SOURCES = SOURCES + ("launch_cuda.cpp",)
HEADERS = ("ort_ops.h",)
CXX_FLAGS = ("-O2", "-std=c++17", "-fPIC", "-fvisibility=hidden", "-pthread")


def library_name(device: str) -> str:
    return f"libsurgeon_ort_{device}" + kbuild.shared_suffix()


def _link_flags(tmp: Path) -> list[str]:
    """Export RegisterCustomOps alone (not even the C++ runtime's templates), resolve all at link time."""
    if sys.platform == "darwin":
        return ["-Wl,-exported_symbol,_RegisterCustomOps"]
    exports = tmp / "exports.map"
    exports.write_text("{ global: RegisterCustomOps; local: *; };\n")
    return ["-Wl,--no-undefined", "-Wl,--exclude-libs,ALL", f"-Wl,--version-script={exports}"]


def _check_runtime(api: int) -> None:
    """Headers newer than the installed onnxruntime give a library it cannot load."""
    try:
        import onnxruntime
    except ImportError:
        return
    minor = int(onnxruntime.__version__.split(".")[1])
    if api > minor:
        raise headers.HeadersNotFound(f"the onnxruntime headers found are API {api} (release 1.{api}) but onnxruntime "
                                      f"{onnxruntime.__version__} is installed; use headers of 1.{minor} or older "
                                      "(ONNXRUNTIME_INCLUDE_DIR)")


def build(device: str = "cpu", archs=None) -> Path:
    """Path to the op library for `device` ("cpu" or "cuda"), compiling it if the cache lacks it."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    include = headers.find()
    api = headers.api_version(include)
    _check_runtime(api)
    cuda = device == "cuda"
    cxx = kbuild.find_cxx()
    archives = [kbuild.build_cpu_archive()] + ([kbuild.build_cuda_archive(archs)] if cuda else [])
    sources = CUDA_SOURCES if cuda else SOURCES
    includes = ["-I", str(include), "-I", str(kbuild.CSRC)]
    if cuda:  # nvcc hands the C++ to the host compiler, with its own include paths
        compiler = kbuild.find_nvcc()
        flags = ["-DSURGEON_ORT_CUDA", "-ccbin", cxx, *CXX_FLAGS[:2], "-Xcompiler", ",".join(CXX_FLAGS[2:])]
        identity = [kbuild.tool_identity(compiler), kbuild.tool_identity(cxx)]
    else:
        compiler, flags, identity = cxx, list(CXX_FLAGS), [kbuild.tool_identity(cxx)]
    files = [Path(__file__), include / headers.HEADER, *archives, *(CSRC / n for n in sources + HEADERS)]
    key = kbuild.digest([*identity, " ".join(flags), device, platform.machine(), sys.platform], files)

    def steps(tmp: Path, outs: list[Path]) -> list[list[list[str]]]:
        objects = [str(tmp / (name + ".o")) for name in sources]
        compiles = [[compiler, *flags, *includes, "-c", "-o", obj, str(CSRC / name)]
                    for name, obj in zip(sources, objects)]
        if cuda:  # nvcc links the CUDA runtime (static) in
            link = [compiler, "-shared", "-ccbin", cxx, "-o", str(outs[0]), *objects, *map(str, archives),
                    *(f"-Xlinker={f.removeprefix('-Wl,')}" for f in _link_flags(tmp)), "-lpthread"]
        else:
            link = [cxx, "-shared", "-pthread", "-o", str(outs[0]), *objects, *map(str, archives), *_link_flags(tmp)]
        return [compiles, [link]]

    what = "onnxruntime op library" + (" (CUDA)" if cuda else "")
    folder = kbuild.cache_root() / "ort" / key
    return kbuild.compile_cached(steps, [library_name(device)], folder, what, "about 10 s")[0]
