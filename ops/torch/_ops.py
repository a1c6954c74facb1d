"""The torch operators surgeon::fused_grid_sample and surgeon::affine_grid: the compiled kernels
(surgeon_ops.kernels: C++ on CPU tensors, CUDA on torch's current stream) as real operators, with
fake implementations (torch.compile, torch.export) and autograd.

`size` here is the spatial output size only; surgeon.torch's public functions take torch's full
size and check the arguments before they get here."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from surgeon_ops import kernels
from surgeon_ops.kernels import native

from . import _checks, _grad


def _threads(t: torch.Tensor):
    """CPU kernels use torch's intra-op thread count (torch.set_num_threads), as torch's ops do."""
    return torch.get_num_threads() if t.device.type == "cpu" else None


_DTYPE_CODES = {torch.float32: 0, torch.float16: 1}  # the C ABI's (kernels._frames.DTYPE_CODES)
_MODE_CODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING_CODES = {"zeros": 0, "border": 1, "reflection": 2}


def plain_eager_cpu(x: torch.Tensor, theta: torch.Tensor) -> bool:
    """Whether a call may run the CPU kernel without the operator: plain CPU tensors, no gradient to
    record, and nothing that must see the operator (torch.compile and torch.export tracing,
    dispatch and function modes, functorch transforms).  The operator's dispatch and the kernel
    API's second round of checks cost 0.04 ms a call (1x3x8x8: 0.067 ms against 0.020)."""
    return (type(x) is torch.Tensor and type(theta) is torch.Tensor and x.device.type == "cpu"
            and not (torch.is_grad_enabled() and (x.requires_grad or theta.requires_grad))
            and not torch.compiler.is_compiling() and not torch._C._is_torch_function_mode_enabled()
            and torch._C._len_torch_dispatch_stack() == 0 and torch._C._functorch.peek_interpreter_stack() is None)


_EXPORT_FLAGS = []  # torch.onnx's exporter flags module, looked up once (None: a torch that moved it)
_SPATIAL_THETA = {4: (2, 3), 5: (3, 4)}  # x's rank -> theta's [k, k + 1]


def onnx_exporting() -> bool:
    """True while torch.onnx.export(dynamo=True) traces the model.  The exporter's own flag, not
    torch.onnx.is_in_onnx_export(): dynamo folds that call to False, and the exporter retries a
    failed non-strict trace through dynamo (strict), which must still reach the symbolic."""
    if not _EXPORT_FLAGS:
        try:
            from torch.onnx._internal.exporter import _flags
        except ImportError:
            _flags = None
        _EXPORT_FLAGS.append(_flags)
    flags = _EXPORT_FLAGS[0]
    return torch.onnx.is_in_onnx_export() if flags is None else bool(flags._is_onnx_exporting)


def plain_call(x, theta, size, mode, padding_mode, align_corners):
    """The spatial output size where a call passes every check of surgeon.torch at a glance and
    takes the kernel without the operator (plain_eager_cpu, no trace or export recording it):
    float32 or float16 CPU tensors of the contract's shapes, the names as they are spelled, a bool
    align_corners and a size of plain positive ints.  Else None: the full checks decide.  Each
    step is one of few distinct calls into torch: after other work has left the caches cold,
    the full checks and routing took 0.07 ms a call (0.012 warm), the operator's whole overhead
    on 1x3x512x512 alternating with torch's pair."""
    if type(x) is not torch.Tensor or type(theta) is not torch.Tensor or type(align_corners) is not bool:
        return None
    if torch.compiler.is_compiling() or torch._C._is_tracing():  # before the shapes: a trace's dims are tensors
        return None
    if type(mode) is not str or type(padding_mode) is not str or mode not in _MODE_CODES \
            or padding_mode not in _PADDING_CODES:
        return None
    xs, ts = x.shape, theta.shape
    want = _SPATIAL_THETA.get(len(xs))
    if want is None or len(ts) != 3 or ts[0] != xs[0] or (ts[1], ts[2]) != want \
            or (mode == "bicubic" and len(xs) == 5):
        return None
    dtype = x.dtype
    if dtype is not theta.dtype or dtype not in _DTYPE_CODES or not (x.is_cpu and theta.is_cpu):
        return None
    nsp = len(xs) - 2
    if size is None:
        spatial = list(xs[2:])
    else:
        if type(size) not in (torch.Size, list, tuple) or any(type(d) is not int for d in size):
            return None
        if len(size) == nsp + 2:
            if size[0] != xs[0]:
                return None
        elif len(size) != nsp:
            return None
        if min(size) <= 0:
            return None
        spatial = list(size[-nsp:])
    if min(xs[2:]) <= 0:
        return None
    if onnx_exporting() or not plain_eager_cpu(x, theta):
        return None
    return spatial


def fused_cpu(x: torch.Tensor, theta: torch.Tensor, size: list, mode: str, padding_mode: str,
              align_corners: bool) -> torch.Tensor:
    """The CPU kernel on arguments surgeon_ops.torch has checked (same batch, dtype and device;
    known names), what the operator's CPU kernel computes, bit for bit; float64 takes the
    reference path as there."""
    code = _DTYPE_CODES.get(x.dtype)
    if code is None:
        return kernels.fused_grid_sample(x, theta, list(size), mode, padding_mode, align_corners,
                                         num_threads=torch.get_num_threads())
    # no detach: nothing records this call (plain_eager_cpu), and the kernel only reads the data
    if not x.is_contiguous():
        x = x.contiguous()
    if not theta.is_contiguous():
        theta = theta.contiguous()
    n, c = x.shape[:2]
    y = torch.empty((n, c, *size), dtype=x.dtype)
    if y.numel():
        native.sample("cpu", True, code, len(size), x.data_ptr(), theta.data_ptr(), y.data_ptr(), n, c, x.shape[2:],
                      size, theta.shape[0], _MODE_CODES[mode], _PADDING_CODES[padding_mode], int(align_corners),
                      torch.get_num_threads())
    return y


@torch.library.custom_op("surgeon::fused_grid_sample", mutates_args=(), device_types=("cpu", "cuda"))
def fused_grid_sample(x: torch.Tensor, theta: torch.Tensor, size: Sequence[int], mode: str, padding_mode: str,
                      align_corners: bool) -> torch.Tensor:
    return kernels.fused_grid_sample(x, theta, list(size), mode, padding_mode, align_corners,
                                     num_threads=_threads(x))


@fused_grid_sample.register_fake
def _(x, theta, size, mode, padding_mode, align_corners):
    _checks.sample("surgeon::fused_grid_sample", x, theta, mode)
    return x.new_empty((x.shape[0], x.shape[1], *size))


def _setup_fused(ctx, inputs, output):
    x, theta, size, mode, padding_mode, align_corners = inputs
    ctx.save_for_backward(x, theta)
    ctx.args = (list(size), mode, padding_mode, align_corners)


def _backward_fused(ctx, grad):
    x, theta = ctx.saved_tensors
    need_x, need_theta = ctx.needs_input_grad[:2]
    grad_x, grad_theta = _grad.fused(grad, x, theta, *ctx.args, need_x, need_theta)
    return grad_x, grad_theta, None, None, None, None


fused_grid_sample.register_autograd(_backward_fused, setup_context=_setup_fused)


@torch.library.custom_op("surgeon::affine_grid", mutates_args=(), device_types=("cpu", "cuda"))
def affine_grid(theta: torch.Tensor, size: Sequence[int], align_corners: bool) -> torch.Tensor:
    return kernels.affine_grid(theta, list(size), align_corners, num_threads=_threads(theta))


@affine_grid.register_fake
def _(theta, size, align_corners):
    nsp = _checks.theta_dims("surgeon::affine_grid", theta)
    return theta.new_empty((theta.shape[0], *size, nsp))


def _setup_grid(ctx, inputs, output):
    theta, size, align_corners = inputs
    ctx.args = (list(size), align_corners)


def _backward_grid(ctx, grad):
    return _grad.theta_from_grid(grad, *ctx.args), None, None


affine_grid.register_autograd(_backward_grid, setup_context=_setup_grid)
