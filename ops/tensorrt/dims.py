"""What the plugins compute before any GPU work, kept free of TensorRT so it is tested as is:
the attributes as TensorRT hands them over (strings arrive with their C terminator), and each
output's dims from its inputs' dims and the static ``output_size`` (TensorRT gives a plugin its
inputs' dims, never a size tensor's values). Dims are opaque here: ints in tests, TensorRT's
shape expressions in a build."""

from __future__ import annotations

MODES = {"bilinear": 0, "linear": 0, "nearest": 1, "bicubic": 2, "cubic": 2}  # as surgeon_kernels.h
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def flag(value) -> int:
    """An INT 0/1 attribute, as a scalar or a 1-element array."""
    values = [int(v) for v in (value if hasattr(value, "__len__") else [value])]
    if len(values) != 1 or values[0] not in (0, 1):
        raise ValueError(f"align_corners must be 0 or 1, got {values}")
    return values[0]


def text(value) -> str:
    """A STRING attribute: TensorRT's parser appends a NUL, the Python plugin API keeps it."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode()
    return str(value).rstrip("\x00")


def mode(value) -> int:
    name = text(value)
    if name not in MODES:
        raise ValueError(f"FusedGridSample: unknown mode {name!r}; expected one of {', '.join(MODES)}")
    return MODES[name]


def padding(value) -> int:
    name = text(value)
    if name not in PADDINGS:
        raise ValueError(f"FusedGridSample: unknown padding_mode {name!r}; expected one of {', '.join(PADDINGS)}")
    return PADDINGS[name]


def spatial(output_size, rank: int, op: str) -> list[int]:
    """``output_size`` as ints, checked against the input's rank (2-D or 3-D)."""
    sizes = [int(v) for v in output_size]
    if len(sizes) not in (2, 3) or len(sizes) != rank or any(v < 1 for v in sizes):
        raise ValueError(f"{op}: output_size {sizes} must hold {rank} dims >= 1 (2-D or 3-D)")
    return sizes


def fused_dims(x_dims, output_size, mode_value) -> list:
    """Y's dims: [N, C] of X, then ``output_size``."""
    x_dims = list(x_dims)
    sizes = spatial(output_size, len(x_dims) - 2, "FusedGridSample")
    if mode(mode_value) == MODES["bicubic"] and len(sizes) == 3:
        raise ValueError("FusedGridSample: bicubic is 2-D only (as in torch)")
    return [x_dims[0], x_dims[1], *sizes]


def grid_dims(theta_dims, output_size) -> list:
    """The grid's dims: [N] of theta, then ``output_size``, then 2 or 3 coordinates."""
    theta_dims = list(theta_dims)
    if len(theta_dims) != 3:
        raise ValueError(f"AffineGridPlugin: theta must be [N, 2, 3] or [N, 3, 4], has rank {len(theta_dims)}")
    sizes = spatial(output_size, len(list(output_size)), "AffineGridPlugin")
    return [theta_dims[0], *sizes, len(sizes)]
