"""ctypes bindings of the C ABI in csrc/surgeon_kernels.h, for the CPU and CUDA libraries the
install built (installed.py).

Callers pass raw data pointers (ints) and plain ints; a nonzero return code becomes a
RuntimeError carrying the library's message.  Each library is loaded once per process.
"""

from __future__ import annotations

import ctypes
import threading

from . import installed

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
        raise installed.LibraryNotInstalled(f"{path} has ABI version {lib.surgeon_kernels_abi_version()}, expected {ABI_VERSION}; "
                                           f"{installed.HOW_TO_BUILD}")
    if kind == "cpu":
        lib.surgeon_cpu_set_fast_paths.argtypes = [_I]
        lib.surgeon_cpu_set_fast_paths.restype = None
        lib.surgeon_cpu_default_threads.restype = _I
        lib.surgeon_cpu_level.restype = ctypes.c_char_p
    else:
        lib.surgeon_cuda_error_string.restype = ctypes.c_char_p
        lib.surgeon_cuda_error_string.argtypes = [_I]
    return lib


def library_file(kind: str):
    """Path of the installed "cpu" or "cuda" library; LibraryNotInstalled (one line) if absent."""
    if kind == "cpu":
        return installed.find(__package__, "surgeon_kernels_cpu")
    return installed.find(__package__, "surgeon_kernels_cuda", installed.HOW_TO_BUILD_CUDA)


def library(kind: str) -> ctypes.CDLL:
    """The loaded "cpu" or "cuda" library."""
    lib = _loaded.get(kind)
    if lib is not None:
        return lib  # per call: no lock once loaded
    with _lock:
        if kind not in _loaded:
            _loaded[kind] = _load(kind, library_file(kind))
        return _loaded[kind]


def _check(lib: ctypes.CDLL, kind: str, code: int, what: str) -> None:
    if code == 0:
        return
    if kind == "cuda" and code >= 1000:
        detail = lib.surgeon_cuda_error_string(code).decode()
    else:
        detail = lib.surgeon_kernels_error_string(code).decode()
    raise RuntimeError(f"surgeon {what} kernel ({kind}) failed: {detail}")


_SIZES: dict[tuple, ctypes.Array] = {}  # the libraries only read them (const int64_t*)


def _sizes(values) -> ctypes.Array:
    """values as an int64 array, made once per distinct sizes (up to 256 kept): making one costs
    ~20 us where other work has left the caches cold, a tenth of that for a dict look-up."""
    key = tuple(int(v) for v in values)
    array = _SIZES.get(key)
    if array is None:
        array = (ctypes.c_int64 * len(key))(*key)
        if len(_SIZES) < 256:
            _SIZES[key] = array
    return array


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
