"""Argument checks of surgeon.torch, with the error types torch's own pair raises: ValueError
for a bad argument value (names, theta's shape, sizes), RuntimeError for tensors that do not go
together (dtype, device, batch).  Shapes may be SymInts (torch.compile, torch.export): relations
between dims go through torch._check so that tracing records them instead of guessing."""

from __future__ import annotations

import operator

import torch

from ..theta_forms import contract_rank

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
# float64 runs the numpy reference on the CPU: the float64 path gradcheck needs, not a fast one.
DTYPES = (torch.float32, torch.float16, torch.float64)


def options(fn: str, mode, padding_mode, align_corners) -> bool:
    """Checks the names; returns align_corners as a bool (None means False, as in torch)."""
    if mode not in MODES:
        raise ValueError(f"{fn}: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: {mode!r}")
    if padding_mode not in PADDINGS:
        raise ValueError(f"{fn}: expected padding_mode to be 'zeros', 'border' or 'reflection', "
                         f"but got: {padding_mode!r}")
    return flag(fn, align_corners)


def flag(fn: str, align_corners) -> bool:
    if align_corners is None:
        return False
    if isinstance(align_corners, bool) or (type(align_corners) is int and align_corners in (0, 1)):
        return bool(align_corners)
    raise ValueError(f"{fn}: align_corners must be a bool, got {align_corners!r}")


def theta_dims(fn: str, theta, want: int | None = None) -> int:
    """2 for [N, 2, 3], 3 for [N, 3, 4]; `want` pins it (from x's rank)."""
    if not isinstance(theta, torch.Tensor):
        raise TypeError(f"{fn}: theta must be a Tensor, got {type(theta).__name__}")
    shape = tuple(known(theta.shape))
    found = contract_rank(shape)
    if found is None or (want is not None and found != want):
        k = want or 2
        raise ValueError(f"{fn}: expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1}, "
                         f"got theta of shape {list(shape)}")
    if not theta.is_floating_point() or theta.dtype not in DTYPES:
        raise RuntimeError(f"{fn}: theta must be float32 or float16 (float64 on the CPU), got {theta.dtype}")
    if theta.device.type not in ("cpu", "cuda", "meta"):  # meta: shapes only (the fake kernel)
        raise RuntimeError(f"{fn}: tensors on {theta.device.type} are not supported (cpu or cuda)")
    if theta.dtype == torch.float64 and theta.device.type != "cpu":
        raise RuntimeError(f"{fn}: float64 runs on the CPU only (the reference path); got {theta.device}")
    return found


def sample(fn: str, x, theta, mode) -> int:
    """x against theta for fused_grid_sample; returns the number of spatial dims."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{fn}: x must be a Tensor, got {type(x).__name__}")
    if x.dim() not in (4, 5):
        raise ValueError(f"{fn}: x must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got shape {list(x.shape)}")
    nsp = theta_dims(fn, theta, x.dim() - 2)
    if mode == "bicubic" and nsp == 3:
        raise RuntimeError(f"{fn}: bicubic interpolation only supports 4D input (as in F.grid_sample)")
    if x.device != theta.device:
        raise RuntimeError(f"{fn}: expected x and theta on the same device, got {x.device} and {theta.device}")
    if x.dtype != theta.dtype:
        raise RuntimeError(f"{fn}: expected x and theta to have the same dtype, got {x.dtype} and {theta.dtype}")
    shape, batch = known(x.shape), known(theta.shape)[0]
    require(batch == shape[0], f"{fn}: expected theta and x to have the same batch size",
            lambda: f", got {batch} and {shape[0]}")
    for d in shape[2:]:
        require(d > 0, f"{fn}: x must have non-empty spatial dims", lambda: f", got shape {shape}")
    return nsp


def require(ok, message: str, detail) -> None:
    """RuntimeError(message + detail()) when ok is False.  A symbolic ok (SymBool) goes to
    torch._check, which records it as a run-time assertion; its message must be a constant."""
    if isinstance(ok, bool):
        if not ok:
            raise RuntimeError(message + detail())
    else:
        torch._check(ok, lambda: message)


def known(dims) -> list:
    """Dims as ints or SymInts; a TorchScript trace hands out 0-d tensors, read here without
    the tracer recording the conversion (no TracerWarning)."""
    if not any(isinstance(d, torch.Tensor) for d in dims):
        return list(dims)
    state = torch._C._get_tracing_state()
    torch._C._set_tracing_state(None)
    try:
        return [int(d) for d in dims]
    finally:
        torch._C._set_tracing_state(state)


def _integer(v):
    """numpy and other integer scalars as int (torch takes them too); anything else as it is."""
    if type(v) is int or isinstance(v, (torch.SymInt, torch.Tensor, bool, float)) or not hasattr(v, "__index__"):
        return v
    return operator.index(v)


def is_static(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def spatial(fn: str, size, nsp: int, batch) -> tuple[list, list | None]:
    """torch's `size` ([N, C, *spatial], as F.affine_grid takes it) or just the spatial dims:
    (spatial dims, [N, C] or None).  Elements are ints, SymInts, or 0-d tensors while a
    TorchScript trace records them; each is checked where its value is known."""
    if isinstance(size, torch.Tensor):
        raise TypeError(f"{fn}: size must be a sequence of ints (torch.Size, list or tuple), not a Tensor")
    try:
        dims = [_integer(d) for d in size]
    except TypeError:
        raise TypeError(f"{fn}: size must be a sequence of ints (torch.Size, list or tuple), got {size!r}") from None
    for d in dims:
        if not (is_static(d) or isinstance(d, torch.SymInt) or (isinstance(d, torch.Tensor) and d.dim() == 0)):
            raise TypeError(f"{fn}: size must hold ints, got {size!r}")
    if len(dims) not in (nsp, nsp + 2):
        raise ValueError(f"{fn}: size must have {nsp + 2} values (N, C, {'D, ' if nsp == 3 else ''}H, W) "
                         f"or {nsp} spatial ones for {nsp}-D theta, got {list(dims)}")
    lead = dims[:2] if len(dims) == nsp + 2 else None
    values = known(dims)
    if any(is_static(d) and d <= 0 for d in values):
        raise ValueError(f"{fn}: expected non-zero, positive output size, got {values}")
    if lead is not None:
        n, b = values[0], known([batch])[0]
        require(n == b, f"{fn}: size[0] must equal theta's batch size", lambda: f", got {n} and {b}")
    return dims[len(dims) - nsp:], lead
