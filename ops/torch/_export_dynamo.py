"""torch.onnx.export(..., dynamo=True): the contract's nodes written through
torch.onnx.ops.symbolic while the exporter traces the model, so a plain export call needs no
translation table.  The output's dtype and (symbolic) shape are declared here, which gives the
node's value_info with dims named after the inputs' dims."""

from __future__ import annotations

import torch

from . import _pieces

symbolic = torch.onnx.ops.symbolic
DOMAIN = "custom.ops"


def _piece(v, tensor, prefer: int):
    """A size element as a piece: static, a dim of `tensor` (the same symbol; axis `prefer`
    first), or computed."""
    if torch.compiler.is_dynamo_compiling():
        # A strict (dynamo) trace, the exporter's retry after a failed non-strict one: dynamo
        # shows SymInts as ints, so every dim is taken as static; a dynamic H/W gets
        # specialised there (an export error naming the dim), a dynamic batch is fine.
        return ("const", v)
    if isinstance(v, torch.SymInt) and v.node.expr.is_number:
        v = int(v.node.expr)
    if not isinstance(v, torch.SymInt):
        return ("const", int(v))
    if tensor is not None:
        dims = list(tensor.shape)
        for axis in [prefer, *range(len(dims))]:
            d = dims[axis] if 0 <= axis < len(dims) else None
            if isinstance(d, torch.SymInt) and d.node.expr == v.node.expr:
                return ("dim", id(tensor), tensor, axis)
    return ("computed", v)


def _size_input(pieces: list, device):
    shapes: dict = {}

    def shape_of(t):
        if id(t) not in shapes:
            shapes[id(t)] = symbolic("Shape", [t], dtype=torch.int64, shape=[t.dim()])
        return shapes[id(t)]

    def const(values):
        return torch.tensor(values, dtype=torch.int64, device=device)

    parts = []
    for group in _pieces.groups(pieces, lambda t: t.dim()):
        if group[0] == "const":
            parts.append(const(group[1]))
        elif group[0] == "shape":
            parts.append(shape_of(group[1]))
        elif group[0] == "gather":
            parts.append(symbolic("Gather", [shape_of(group[1]), const(group[2])], {"axis": 0},
                                  dtype=torch.int64, shape=[len(group[2])]))
        else:
            parts.append(torch.full((1,), group[1], dtype=torch.int64, device=device))
    if len(parts) == 1:
        return parts[0]
    return symbolic("Concat", parts, {"axis": 0}, dtype=torch.int64, shape=[len(pieces)])


def _size_args(pieces: list, inputs: list, attrs: dict, device) -> None:
    """output_size when every spatial dim is static, else the size input (ops/OPS.md)."""
    if _pieces.is_static(pieces[2:]):
        attrs["output_size"] = [p[1] for p in pieces[2:]]
    else:
        inputs.append(_size_input(pieces, device))


def _check_dtype(what: str, dtype) -> None:
    if dtype not in (torch.float32, torch.float16):
        raise ValueError(f"custom.ops::{what} takes float32 or float16 (ops/OPS.md); cannot export {dtype}")


# dont_skip_tracing: when torch.onnx.export retries with a strict (dynamo) trace, dynamo must
# trace into torch.onnx.ops.symbolic, which it skips by default.
@torch._dynamo.dont_skip_tracing
def fused_grid_sample(x, theta, spatial: list, mode: str, padding_mode: str, align_corners: bool):
    _check_dtype("FusedGridSample", x.dtype)
    n = x.shape[0]
    # As surgeon fuse: N static or x's, C always read from x, spatial as given.
    pieces = [_piece(n, x, 0), ("dim", id(x), x, 1)] + [_piece(v, x, 2 + i) for i, v in enumerate(spatial)]
    inputs, attrs = [x, theta], {"align_corners": int(align_corners), "mode": mode, "padding_mode": padding_mode}
    _size_args(pieces, inputs, attrs, x.device)
    return symbolic(f"{DOMAIN}::FusedGridSample", inputs, attrs, dtype=x.dtype,
                    shape=[n, x.shape[1], *spatial], version=1)


@torch._dynamo.dont_skip_tracing
def affine_grid(theta, spatial: list, lead: list | None, align_corners: bool):
    _check_dtype("AffineGrid", theta.dtype)
    n, k = theta.shape[0], theta.shape[1]
    lead_pieces = [_piece(n, theta, 0), ("const", 1)] if lead is None else [_piece(lead[0], theta, 0),
                                                                            _piece(lead[1], None, 1)]
    pieces = lead_pieces + [_piece(v, None, 0) for v in spatial]
    inputs, attrs = [theta], {"align_corners": int(align_corners)}
    _size_args(pieces, inputs, attrs, theta.device)
    return symbolic(f"{DOMAIN}::AffineGrid", inputs, attrs, dtype=theta.dtype, shape=[n, *spatial, k], version=1)
