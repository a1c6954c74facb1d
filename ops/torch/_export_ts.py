"""torch.onnx.export(..., dynamo=False) and torch.jit.trace: the ops run inside an
autograd.Function whose `symbolic` writes the contract's node.  (The tracer cannot record a
custom op whose size list holds traced dims, so a traced call never reaches the op directly.)

A size element arrives as an int or as the ONNX value the exporter made of `x.size(i)`
(Gather(Shape(src), i)), a constant when src's dim is static, or another value when computed.
The node's output type is copied from a scratch value whose shape ONNX inference derives from
the source's own dims, so its dims keep their names ('N', 'H', ...); the exporter's dead-code
pass drops the scratch nodes."""

from __future__ import annotations

import torch

from . import _checks, _pieces

DOMAIN = "custom.ops"


def _const(g, values):
    return g.op("Constant", value_t=torch.tensor(values, dtype=torch.int64))


def _piece(v):
    """A size element (int or ONNX value) as a piece."""
    if isinstance(v, int):
        return ("const", v)
    node = v.node()
    if node.kind() == "onnx::Constant":
        return ("const", int(node.t("value").reshape(-1)[0]))
    if node.kind() == "onnx::Gather" and node.inputsAt(0).node().kind() == "onnx::Shape":
        shape, index = node.inputsAt(0).node(), node.inputsAt(1).node()
        if index.kind() == "onnx::Constant" and not shape.attributeNames() and index.t("value").numel() == 1:
            src, axis = shape.inputsAt(0), int(index.t("value").reshape(-1)[0])
            return _dim(src, axis)
    return ("computed", v)


def _dim(src, axis: int):
    sizes = src.type().varyingSizes()
    if sizes and sizes[axis] is not None:
        return ("const", sizes[axis])
    return ("dim", src.unique(), src, axis)


def _size_input(g, pieces):
    shapes: dict = {}

    def shape_of(src):
        if src.unique() not in shapes:
            shapes[src.unique()] = g.op("Shape", src)
        return shapes[src.unique()]

    parts = []
    for group in _pieces.groups(pieces, lambda src: src.type().dim()):
        if group[0] == "const":
            parts.append(_const(g, group[1]))
        elif group[0] == "shape":
            parts.append(shape_of(group[1]))
        elif group[0] == "gather":
            parts.append(g.op("Gather", shape_of(group[1]), _const(g, group[2]), axis_i=0))
        else:
            parts.append(g.op("Reshape", group[1], _const(g, [1])))
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis_i=0)


def _size_args(g, pieces, inputs: list, attrs: dict) -> None:
    if _pieces.is_static(pieces[2:]):
        attrs["output_size_i"] = [p[1] for p in pieces[2:]]
    else:
        inputs.append(_size_input(g, pieces))


def _resized(g, t, axis_sizes: dict):
    """Scratch value: t with each given axis replaced by static dims (Gather of zero indices
    shaped like those dims); the other dims keep their symbols."""
    for axis, dims in axis_sizes.items():
        zeros = torch.zeros(dims if isinstance(dims, list) else [dims], dtype=torch.int64)
        t = g.op("Gather", t, g.op("Constant", value_t=zeros), axis_i=axis)
    return t


def _reads(p, src, axis: int) -> bool:
    return p[0] == "dim" and p[1] == src.unique() and p[3] == axis


def _set_type(y, like, ref, dims: list) -> None:
    """y's type: ref's dtype; the shape of the scratch value `like` (named dims) when there is
    one, else `dims` (dynamic dims unnamed)."""
    y.setType(like.type().with_dtype(ref.type().dtype()) if like is not None else ref.type().with_sizes(dims))


def _check_dtype(what: str, value) -> None:
    dtype = value.type().dtype()
    if dtype is not None and dtype not in (torch.float32, torch.float16):
        raise ValueError(f"custom.ops::{what} takes float32 or float16 (ops/OPS.md); cannot export {dtype}")


class FusedGridSample(torch.autograd.Function):
    """apply(x, theta, mode, padding_mode, align_corners, *spatial size elements)."""

    @staticmethod
    def forward(ctx, x, theta, mode, padding_mode, align_corners, *size):
        # read the traced dims anew: a replayed torch.jit.trace passes the current ones
        return torch.ops.surgeon.fused_grid_sample(x, theta, _checks.known(size), mode, padding_mode, align_corners)

    @staticmethod
    def symbolic(g, x, theta, mode, padding_mode, align_corners, *size):
        _check_dtype("FusedGridSample", x)
        pieces = [_dim(x, 0), ("dim", x.unique(), x, 1)] + [_piece(v) for v in size]  # N, C as surgeon fuse
        inputs, attrs = [x, theta], {"align_corners_i": int(align_corners), "mode_s": mode,
                                     "padding_mode_s": padding_mode}
        _size_args(g, pieces, inputs, attrs)
        y = g.op(f"{DOMAIN}::FusedGridSample", *inputs, **attrs)
        spatial = pieces[2:]
        like = None
        if all(p[0] == "const" or _reads(p, x, 2 + i) for i, p in enumerate(spatial)):
            like = _resized(g, x, {2 + i: p[1] for i, p in enumerate(spatial) if p[0] == "const"})
        _set_type(y, like, x, [None, None] + [p[1] if p[0] == "const" else None for p in spatial])
        return y


class AffineGrid(torch.autograd.Function):
    """apply(theta, align_corners, *size elements: torch's full size or the spatial one)."""

    @staticmethod
    def forward(ctx, theta, align_corners, *size):
        k = theta.shape[1]
        return torch.ops.surgeon.affine_grid(theta, _checks.known(size[len(size) - k:]), align_corners)

    @staticmethod
    def symbolic(g, theta, align_corners, *size):
        _check_dtype("AffineGrid", theta)
        k = theta.type().varyingSizes()[1]
        lead = [_dim(theta, 0), ("const", 1)] if len(size) == k else [_piece(v) for v in size[:2]]
        pieces = lead + [_piece(v) for v in size[len(size) - k:]]
        _channels_from_source(pieces, k)
        inputs, attrs = [theta], {"align_corners_i": int(align_corners)}
        _size_args(g, pieces, inputs, attrs)
        y = g.op(f"{DOMAIN}::AffineGrid", *inputs, **attrs)
        dims = [None] + [p[1] if p[0] == "const" else None for p in pieces[2:]] + [k]
        _set_type(y, _grid_like(g, theta, pieces, k), theta, dims)
        return y


def _channels_from_source(pieces, k) -> None:
    """size = x.size(): the exporter folded x's static C into a constant; surgeon fuse reads C
    from x (Shape(x) then covers the whole size), so take it back from the source of the other
    dims when that source's C is this constant."""
    src = next((p[2] for p in pieces if p[0] == "dim" and p[2].type().dim() == k + 2), None)
    if src is not None and pieces[1][0] == "const" and src.type().varyingSizes()[1] == pieces[1][1]:
        pieces[1] = ("dim", src.unique(), src, 1)


def _grid_like(g, theta, pieces, k):
    """Scratch value shaped [N, *spatial, k] from theta (static spatial) or from the one source
    all dynamic dims come from (x.size())."""
    spatial = pieces[2:]
    dynamic = [p for p in spatial if p[0] != "const"]
    if not dynamic:  # theta [N, k, k+1] -> [N, *spatial, k+1] -> [N, *spatial, k]
        t = _resized(g, theta, {1: [p[1] for p in spatial]})
        return _resized(g, t, {1 + k: k})
    src = dynamic[0][2] if dynamic[0][0] == "dim" else None
    if src is None or src.type().dim() != k + 2 or not all(
            p[0] == "const" or _reads(p, src, 2 + i) for i, p in enumerate(spatial)):
        return None
    t = g.op("Transpose", src, perm_i=[0, *range(2, k + 2), 1])  # [N, *spatial, C]
    return _resized(g, t, {**{1 + i: p[1] for i, p in enumerate(spatial) if p[0] == "const"}, 1 + k: k})
