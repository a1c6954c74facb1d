"""Argument checks shared by every backend: names, flags, shapes.  Each failure is a
one-line ValueError."""

from __future__ import annotations

import numpy as np

from ..theta_forms import contract_rank

# opset-20 GridSample names are read as torch's (ops/OPS.md).
MODES = {"bilinear": 0, "linear": 0, "nearest": 1, "bicubic": 2, "cubic": 2}
MODE_NAMES = ("bilinear", "nearest", "bicubic")
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
PADDING_NAMES = ("zeros", "border", "reflection")
BACKENDS = ("auto", "numpy", "cpp", "cuda")


def _text(value, what: str) -> str:
    if isinstance(value, bytes):  # ONNX STRING attributes arrive as bytes
        value = value.decode()
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {value!r}")
    return value


def mode_code(mode) -> int:
    name = _text(mode, "mode")
    if name not in MODES:
        raise ValueError(f"unknown mode {name!r}; expected one of {', '.join(MODES)}")
    return MODES[name]


def padding_code(padding_mode) -> int:
    name = _text(padding_mode, "padding_mode")
    if name not in PADDINGS:
        raise ValueError(f"unknown padding_mode {name!r}; expected one of {', '.join(PADDINGS)}")
    return PADDINGS[name]


def flag(align_corners) -> int:
    if isinstance(align_corners, (bool, np.bool_)):
        return int(align_corners)
    if isinstance(align_corners, (int, np.integer)) and int(align_corners) in (0, 1):
        return int(align_corners)
    raise ValueError(f"align_corners must be a bool or 0/1, got {align_corners!r}")


def backend_name(backend) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    return backend


def check_mode_for_dims(mode: int, nsp: int) -> None:
    if mode == MODES["bicubic"] and nsp == 3:
        raise ValueError("bicubic mode is 2-D only (as in torch); got a 5-D input")


def output_size(size, nsp: int, batch: int | None, channels: int | None) -> tuple[int, ...]:
    """The spatial output size from `size`: spatial ([H, W] / [D, H, W]) or torch's full
    size ([N, C, H, W] / [N, C, D, H, W], whose N and C must agree with the data)."""
    try:
        if isinstance(size, (tuple, list)) and all(type(v) is int for v in size):
            dims = list(size)  # the usual spelling (torch.Size included), without numpy's cost
        else:
            dims = [int(v) for v in np.asarray(size).reshape(-1)]
    except (TypeError, ValueError):
        raise ValueError(f"output_size must be a sequence of ints, got {size!r}") from None
    if len(dims) == nsp + 2:
        if batch is not None and dims[0] != batch:
            raise ValueError(f"output_size {dims} has batch {dims[0]}, the data has {batch}")
        if channels is not None and dims[1] != channels:
            raise ValueError(f"output_size {dims} has {dims[1]} channels, the input has {channels}")
        dims = dims[2:]
    elif len(dims) != nsp:
        raise ValueError(f"output_size must have {nsp} (spatial) or {nsp + 2} values for {nsp}-D, got {dims}")
    if any(d < 0 for d in dims):
        raise ValueError(f"output_size must not be negative, got {dims}")
    return tuple(dims)


def theta_dims(theta_shape) -> int:
    """Spatial dims from theta's shape: [N, 2, 3] -> 2, [N, 3, 4] -> 3."""
    shape = tuple(theta_shape)
    k = contract_rank(shape)
    if k is not None:
        return k
    raise ValueError(f"theta must have shape [N, 2, 3] or [N, 3, 4], got {list(shape)}")


def check_sampling_shapes(x_shape, coord_shape, from_theta: bool) -> int:
    """Checks x against theta (fused) or a grid; returns the number of spatial dims."""
    x_shape, coord_shape = tuple(x_shape), tuple(coord_shape)
    if len(x_shape) not in (4, 5):
        raise ValueError(f"x must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got shape {list(x_shape)}")
    nsp = len(x_shape) - 2
    if any(d < 1 for d in x_shape[2:]):
        raise ValueError(f"x must have non-empty spatial dims, got shape {list(x_shape)}")
    n = x_shape[0]
    if from_theta:
        want = (nsp, nsp + 1)
        if len(coord_shape) != 3 or coord_shape[1:] != want:
            raise ValueError(f"theta must have shape [N, {want[0]}, {want[1]}] for a {len(x_shape)}-D x, got {list(coord_shape)}")
        what = "theta"
    else:
        if len(coord_shape) != nsp + 2 or coord_shape[-1] != nsp:
            dims = ", ".join(f"{d}_out" for d in "DHW"[3 - nsp:])
            raise ValueError(f"grid must have shape [N, {dims}, {nsp}] for a {len(x_shape)}-D x, got {list(coord_shape)}")
        what = "grid"
    if coord_shape[0] not in (n, 1):
        raise ValueError(f"{what} batch {coord_shape[0]} must equal x's batch {n} or be 1 (broadcast)")
    return nsp


def data_dtype(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in (np.float16, np.float32, np.float64):
        raise ValueError(f"data must be float16 or float32 (float64 with backend='numpy'), got {dt}")
    return dt
