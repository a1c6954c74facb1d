"""ctypes bindings of the C ABI in csrc/surgeon_kernels.h, for the CPU and CUDA libraries.

Callers pass raw data pointers (ints) and plain ints; a nonzero return code becomes a
RuntimeError carrying the library's message.  Each library is loaded once per process.
"""

from __future__ import annotations

import ctypes
import threading

_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL] = {}

_I64P = ctypes.POINTER(ctypes.c_int64)
_P = ctypes.c_void_p
_I = ctypes.c_int
_L = ctypes.c_int64

# name -> argument types before the last one (num_threads on the CPU, stream on CUDA)
_SIGNATURES = {
    "affine_grid": [_I, _I, _P, _P, _L, _I64P, _I],
    "fused_grid_sample": [_I, _I, _P, _P, _P, _L, _L, _I64P, _I64P, _L, _I, _I, _I],
    "grid_sample": [_I, _I, _P, _P, _P, _L, _L, _I64P, _I64P, _L, _I, _I, _I],
}
ABI_VERSION = 2


def _load(kind: str, path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    last = _I if kind == "cpu" else _P
    for name, args in _SIGNATURES.items():
        fn = getattr(lib, f"surgeon_{name}_{kind}")
        fn.restype = ctypes.c_int
        fn.argtypes = [*args, last]
    lib.surgeon_kernels_error_string.restype = ctypes.c_char_p
    lib.surgeon_kernels_error_string.argtypes = [_I]
    lib.surgeon_kernels_abi_version.restype = _I
    if lib.surgeon_kernels_abi_version() != ABI_VERSION:
        from .build import KernelBuildError

        raise KernelBuildError(f"{path} has ABI version {lib.surgeon_kernels_abi_version()}, expected {ABI_VERSION}")
    if kind == "cpu":
        lib.surgeon_cpu_set_fast_paths.argtypes = [_I]
        lib.surgeon_cpu_set_fast_paths.restype = None
        lib.surgeon_cpu_default_threads.restype = _I
        lib.surgeon_cpu_level.restype = ctypes.c_char_p
    else:
        lib.surgeon_cuda_error_string.restype = ctypes.c_char_p
        lib.surgeon_cuda_error_string.argtypes = [_I]
    return lib


def library(kind: str) -> ctypes.CDLL:
    """The loaded "cpu" or "cuda" library, built first if needed."""
    lib = _loaded.get(kind)
    if lib is not None:
        return lib  # per call: no lock once loaded
    with _lock:
        if kind not in _loaded:
            from . import build  # here, not above: `python -m surgeon_ops.kernels.build` runs it fresh

            path = build.build_cpu() if kind == "cpu" else build.build_cuda(_device_archs())
            _loaded[kind] = _load(kind, path)
        return _loaded[kind]


def _device_archs():
    # Build for the GPUs this process sees (plus PTX); the default list when none is visible.
    import torch

    if not torch.cuda.is_available():
        return None
    caps = {torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())}
    return [f"sm_{major}{minor}" for major, minor in sorted(caps)]


def _check(lib: ctypes.CDLL, kind: str, code: int, what: str) -> None:
    if code == 0:
        return
    if kind == "cuda" and code >= 1000:
        detail = lib.surgeon_cuda_error_string(code).decode()
    else:
        detail = lib.surgeon_kernels_error_string(code).decode()
    raise RuntimeError(f"surgeon {what} kernel ({kind}) failed: {detail}")


def _sizes(values) -> ctypes.Array:
    return (ctypes.c_int64 * len(values))(*[int(v) for v in values])


def affine_grid(kind, dtype, nsp, theta, grid, n, out_size, align_corners, last):
    lib = library(kind)
    fn = getattr(lib, f"surgeon_affine_grid_{kind}")
    _check(lib, kind, fn(dtype, nsp, theta, grid, n, _sizes(out_size), align_corners, last), "affine_grid")


def sample(kind, from_theta, dtype, nsp, x, coords, y, n, c, in_size, out_size, coord_batch, mode, pad,
           align_corners, last):
    lib = library(kind)
    name = "fused_grid_sample" if from_theta else "grid_sample"
    fn = getattr(lib, f"surgeon_{name}_{kind}")
    code = fn(dtype, nsp, x, coords, y, n, c, _sizes(in_size), _sizes(out_size), coord_batch, mode, pad,
              align_corners, last)
    _check(lib, kind, code, name)


def cpu_level() -> str:
    """The instruction-set level the CPU library runs ("x86-64", "x86-64-v3", "x86-64-v4",
    "generic"), chosen at its first call: the widest this CPU has, or $SURGEON_CPU_LEVEL's."""
    return library("cpu").surgeon_cpu_level().decode()


def set_cpu_fast_paths(enabled: bool) -> None:
    """Testing hook: False runs every CPU output location through csrc/locations.h, the
    code one CUDA thread runs (the fast paths must give the same bits)."""
    library("cpu").surgeon_cpu_set_fast_paths(1 if enabled else 0)
