"""The public kernel functions (re-exported by surgeon_ops.kernels).

numpy in -> numpy out, computed on the CPU; torch tensors in -> a torch tensor out on the
tensors' device (the CUDA kernels on a GPU, the C++ kernels on the CPU).  `backend` picks an
implementation explicitly: "numpy" (the oracle), "cpp", "cuda"; "auto" as just described,
and the oracle for float64 CPU data.  No autograd: outputs are plain values.
"""

from __future__ import annotations

import numpy as np

from . import _args, native, oracle
from ._frames import DTYPE_CODES, frame_for


def _threads(num_threads) -> int:
    if num_threads is None:
        return 0  # the library's default: $SURGEON_NUM_THREADS, else the CPUs we may use
    if isinstance(num_threads, (int, np.integer)) and num_threads >= 1:
        return int(num_threads)
    raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")


def _backend(backend, frame, dtype: np.dtype) -> str:
    backend = _args.backend_name(backend)
    if backend == "auto":
        backend = "cuda" if frame.is_cuda else ("numpy" if dtype == np.float64 else "cpp")
    if backend == "cuda" and not frame.is_cuda:
        raise ValueError("backend='cuda' needs torch CUDA tensors")
    if backend == "cpp" and frame.is_cuda:
        raise ValueError("backend='cpp' runs on the CPU; got CUDA tensors (use 'cuda' or 'auto')")
    if backend in ("cpp", "cuda") and dtype == np.float64:
        raise ValueError(f"float64 is only supported by backend='numpy', not {backend!r}")
    return backend


def _native_last(backend: str, frame, num_threads):
    return _threads(num_threads) if backend == "cpp" else frame.stream()


def _run_cuda(frame, fn):
    # Launch on the tensors' device, on torch's current stream there.
    if not frame.is_cuda or frame.device.index in (None, frame.torch.cuda.current_device()):
        return fn()
    with frame.torch.cuda.device(frame.device):
        return fn()


def affine_grid(theta, output_size, align_corners=False, *, backend="auto", num_threads=None):
    """torch.nn.functional.affine_grid(theta, size, align_corners).

    theta: [N, 2, 3] (2-D) or [N, 3, 4] (3-D), float32 or float16.  output_size: the spatial
    size [H, W] / [D, H, W] (torch's full [N, C, ...] size is accepted too).  Returns the
    grid [N, H, W, 2] / [N, D, H, W, 3] in theta's dtype and framework/device.
    """
    ac = _args.flag(align_corners)
    frame = frame_for(theta)
    theta = frame.convert(theta)
    dtype = frame.dtype(theta)
    nsp = _args.theta_dims(theta.shape)
    size = _args.output_size(output_size, nsp, theta.shape[0], None)
    backend = _backend(backend, frame, dtype)
    if backend == "numpy":
        return frame.from_numpy(oracle.affine_grid(frame.to_numpy(theta), size, bool(ac)))
    theta = frame.contiguous(theta)
    grid = frame.empty((theta.shape[0],) + size + (nsp,), dtype)
    if theta.shape[0] == 0 or 0 in size:
        return grid
    kind = "cpu" if backend == "cpp" else "cuda"
    last = _native_last(backend, frame, num_threads)
    _run_cuda(frame, lambda: native.affine_grid(kind, DTYPE_CODES[dtype], nsp, frame.ptr(theta), frame.ptr(grid),
                                                theta.shape[0], size, ac, last))
    return grid


def _sample(x, coords, output_size, from_theta, mode, padding_mode, align_corners, backend, num_threads):
    mode_c, pad_c, ac = _args.mode_code(mode), _args.padding_code(padding_mode), _args.flag(align_corners)
    frame = frame_for(x)
    x = frame.convert(x)
    dtype = frame.dtype(x)
    coords = frame.convert(coords, dtype)  # theta / grid take x's dtype (ops/OPS.md: same type)
    nsp = _args.check_sampling_shapes(x.shape, coords.shape, from_theta)
    _args.check_mode_for_dims(mode_c, nsp)
    n, c = x.shape[:2]
    size = _args.output_size(output_size, nsp, n, c) if from_theta else tuple(coords.shape[1:-1])
    backend = _backend(backend, frame, dtype)
    names = (_args.MODE_NAMES[mode_c], _args.PADDING_NAMES[pad_c], bool(ac))
    if backend == "numpy":
        xn, cn = frame.to_numpy(x), frame.to_numpy(coords)
        if 0 in xn.shape[:2] or 0 in size:
            return frame.empty((n, c) + size, dtype)
        y = oracle.fused_grid_sample(xn, cn, size, *names) if from_theta else oracle.grid_sample(xn, cn, *names)
        return frame.from_numpy(y)
    x, coords = frame.contiguous(x), frame.contiguous(coords)
    y = frame.empty((n, c) + size, dtype)
    if n == 0 or c == 0 or 0 in size:
        return y
    kind = "cpu" if backend == "cpp" else "cuda"
    last = _native_last(backend, frame, num_threads)
    _run_cuda(frame, lambda: native.sample(kind, from_theta, DTYPE_CODES[dtype], nsp, frame.ptr(x), frame.ptr(coords),
                                           frame.ptr(y), n, c, x.shape[2:], size, coords.shape[0], mode_c, pad_c,
                                           ac, last))
    return y


def fused_grid_sample(x, theta, output_size, mode="bilinear", padding_mode="zeros", align_corners=False, *,
                      backend="auto", num_threads=None):
    """grid_sample(x, affine_grid(theta, output_size)) without materialising the grid.

    x: [N, C, H, W] or [N, C, D, H, W], float32 or float16; theta: [N, 2, 3] / [N, 3, 4] or a
    batch of 1, which is then used for every image (broadcast); it is cast to x's dtype.
    output_size: spatial [H_out, W_out] / [D_out, H_out, W_out] (or torch's full size).
    mode: bilinear|nearest|bicubic (opset-20 linear|cubic accepted; bicubic 2-D only);
    padding_mode: zeros|border|reflection.  float16 is computed in float32 throughout, the
    grid included (never rounded to float16).  Returns [N, C, *output_size] in x's dtype.
    """
    return _sample(x, theta, output_size, True, mode, padding_mode, align_corners, backend, num_threads)


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False, *, backend="auto",
                num_threads=None):
    """torch.nn.functional.grid_sample(x, grid, mode, padding_mode, align_corners).

    grid: [N, H_out, W_out, 2] / [N, D_out, H_out, W_out, 3] (x, y(, z) in [-1, 1]), cast to
    x's dtype; a grid batch of 1 is used for every image.
    """
    return _sample(x, grid, None, False, mode, padding_mode, align_corners, backend, num_threads)
