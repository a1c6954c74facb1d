"""The plugins' enqueue: the CUDA launchers of surgeon_kernels.h (the project's one CUDA source,
ops/kernels/csrc/cuda_kernels.cu) called through ctypes on TensorRT's stream, with TensorRT's
device pointers. The library is the one the install built with nvcc (surgeon_ops.kernels)."""

from __future__ import annotations

import threading

from surgeon_ops.kernels import native

_lock = threading.Lock()
_library: list = []  # the loaded CUDA library, once


def library():
    if not _library:
        with _lock:
            if not _library:
                _library.append(native.library("cuda"))
    return _library[0]


def _sizes(values):
    return native._sizes(values)


def fused_grid_sample(dtype: int, x: int, theta: int, y: int, x_shape, theta_batch: int, out_size, mode: int,
                      padding: int, align_corners: int, stream: int) -> None:
    """Y = FusedGridSample(X, theta) for dense tensors at device pointers x, theta, y."""
    n, c, *in_size = (int(d) for d in x_shape)
    if min([n, c, *in_size, *out_size], default=0) < 1:
        return  # an empty tensor: nothing to write (the launchers require sizes >= 1)
    lib = library()
    code = lib.surgeon_fused_grid_sample_cuda(dtype, len(in_size), x, theta, y, n, c, _sizes(in_size),
                                              _sizes(out_size), int(theta_batch), mode, padding, align_corners,
                                              stream)
    native._check(lib, "cuda", code, "FusedGridSample plugin")


def affine_grid(dtype: int, theta: int, grid: int, n: int, out_size, align_corners: int, stream: int) -> None:
    """grid = AffineGrid(theta) for dense tensors at device pointers theta, grid."""
    if min([int(n), *out_size]) < 1:
        return
    lib = library()
    code = lib.surgeon_affine_grid_cuda(dtype, len(out_size), theta, grid, int(n), _sizes(out_size), align_corners,
                                        stream)
    native._check(lib, "cuda", code, "AffineGridPlugin plugin")
