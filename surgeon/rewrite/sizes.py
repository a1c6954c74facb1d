"""Writing what a rewrite reads off the model's own dims at run time: size tensors from pieces
(static values, dims of a value's shape, elements of a size given as data) and coefficients that
follow the dims as powers of d and d - 1 (``surgeon.recognise.scaling``), affine maps whose
coefficients may follow them, every new value's type and dims declared."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, helper


@dataclass(frozen=True)
class Fixed:
    """A size piece known statically."""

    value: int


@dataclass(frozen=True)
class DimOf:
    """A size piece read from a value's shape at run time."""

    value: str
    axis: int


@dataclass(frozen=True)
class ElemOf:
    """A size piece read from an element of an int tensor (a size given as data)."""

    value: str
    index: int


Piece = Fixed | DimOf | ElemOf


def dim_piece(dims, value: str, axis: int) -> Piece:
    """A dim of ``value`` (declared ``dims``) as a piece: its static size, else read at run time."""
    d = dims[axis] if dims is not None and len(dims) > axis else None
    return Fixed(d) if isinstance(d, int) else DimOf(value, axis)


class SizeWriter:
    """Adds nodes to a rewrite's graph (``ctx``: the ``RewriteContext``), one ``Shape`` per value
    however often its dims are read."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._shapes: dict[str, str] = {}

    def const(self, values, hint: str) -> str:
        """An int64 initializer."""
        return self.ctx.add_constant(np.array(values, dtype=np.int64), hint)

    def node(self, op: str, inputs, hint: str, elem: int, dims, **attrs) -> str:
        """One node's single output, its type and dims declared."""
        out = self.ctx.add_node(op, inputs, [self.ctx.fresh_name(hint)], **attrs)[0]
        self.ctx.set_shape(out, elem, dims)
        return out

    def shape_of(self, value: str) -> str:
        if value not in self._shapes:
            rank = len(self.ctx.shape(value) or ())
            self._shapes[value] = self.node("Shape", [value], f"{value}_shape", TensorProto.INT64, [rank or None])
        return self._shapes[value]

    def _elements(self, value: str) -> str:
        """An int tensor read as data, as int64 [n] (a scalar or int32 size is converted)."""
        dims = self.ctx.shape(value)
        if self.ctx.dtype(value) != TensorProto.INT64:
            value = self.node("Cast", [value], f"{value}_int64", TensorProto.INT64, dims, to=TensorProto.INT64)
        if dims == ():
            value = self.node("Reshape", [value, self.const([1], f"{value}_one")], f"{value}_vector",
                              TensorProto.INT64, [1])
        return value

    def pieces(self, pieces: list[Piece], hint: str) -> str:
        """An int64 1-D tensor from constant, dim and element pieces: runs of constants become one
        initializer, runs of one value's dims or elements one Gather (all of its dims: its Shape;
        all of its elements: itself)."""
        groups: list[list] = []  # [kind, value, items]
        for piece in pieces:
            kind, value, item = (type(piece), None, int(piece.value)) if isinstance(piece, Fixed) else \
                (type(piece), piece.value, piece.axis if isinstance(piece, DimOf) else piece.index)
            if groups and groups[-1][0] is kind and groups[-1][1] == value:
                groups[-1][2].append(item)
            else:
                groups.append([kind, value, [item]])
        parts = []
        for kind, value, items in groups:
            if kind is Fixed:
                parts.append(self.const(items, f"{hint}_const"))
                continue
            if kind is DimOf:
                source, length = self.shape_of(value), len(self.ctx.shape(value) or ())
            else:
                dims = self.ctx.shape(value)
                source, length = self._elements(value), (dims[0] if dims else 1 if dims == () else None)
            if isinstance(length, int) and items == list(range(length)):  # a symbolic length: Gather
                parts.append(source)
            else:
                parts.append(self.node("Gather", [source, self.const(items, f"{hint}_axes")],
                                       f"{hint}_dims", TensorProto.INT64, [len(items)], axis=0))
        if len(parts) == 1:
            return parts[0]
        return self.node("Concat", parts, hint, TensorProto.INT64, [len(pieces)], axis=0)

    def scaled(self, scaling, pieces: list, elem: int, select: np.ndarray, hint: str) -> str:
        """A 1-D tensor of ``elem``: the coefficients ``select`` picks, at the run-time dims: per
        monomial of ``scaling`` (a ``DimScaling``) its weights times that monomial of the model's
        own dims, summed. ``pieces``: per rep of ``scaling``, where its dim is read (a DimOf or
        ElemOf)."""
        n = len(select)
        dims = [self.node("Cast", [self.pieces([piece], f"{hint}_dim")], f"{hint}_dim", elem, [1], to=elem)
                for piece in pieces]
        terms = []
        for row, weight in scaling.monomials().items():
            chosen = weight[select]
            if not chosen.any():
                continue
            dtype = helper.tensor_dtype_to_np_dtype(elem)
            picked = self.ctx.add_constant(chosen.astype(dtype), f"{hint}_coefficients")
            value = self._monomial(row, dims, elem, hint)
            terms.append(picked if value is None else self.node("Mul", [picked, value], hint, elem, [n]))
        if not terms:  # every coefficient picked is 0 at every size
            return self.ctx.add_constant(np.zeros(n, helper.tensor_dtype_to_np_dtype(elem)), f"{hint}_coefficients")
        if len(terms) == 1:
            return terms[0]
        return self.node("Sum", terms, hint, elem, [n])

    def _monomial(self, row: tuple, dims: list[str], elem: int, hint: str) -> str | None:
        """prod(d ** e * (d - 1) ** f) over the groups' (e, f) as a [1] tensor (None for the empty
        product): multiplied first, then divided, as the exporters' ``2 / W`` and ``H / W`` are."""
        factors = []  # (value, power)
        for dim, (e, f) in zip(dims, row):
            factors.append((dim, e))
            if f:
                one = self.ctx.add_constant(np.ones(1, helper.tensor_dtype_to_np_dtype(elem)), f"{hint}_one")
                factors.append((self.node("Sub", [dim, one], f"{hint}_less_one", elem, [1]), f))
        value = None
        for factor, power in factors:
            for _ in range(max(power, 0)):
                value = factor if value is None else self.node("Mul", [value, factor], f"{hint}_monomial", elem, [1])
        for factor, power in factors:
            for _ in range(max(-power, 0)):
                if value is None:
                    value = self.node("Reciprocal", [factor], f"{hint}_monomial", elem, [1])
                else:
                    value = self.node("Div", [value, factor], f"{hint}_monomial", elem, [1])
        return value

    def fitted(self, value: np.ndarray, elem: int, scaling=None, pieces: list = (), hint: str = "fitted") -> str:
        """``value`` as a constant of ``elem``; with ``scaling``, its elements follow the dims."""
        if scaling is None:
            return self.ctx.add_constant(value.astype(helper.tensor_dtype_to_np_dtype(elem)), hint)
        flat = self.scaled(scaling, pieces, elem, np.arange(value.size), hint)
        return self.node("Reshape", [flat, self.const(list(value.shape), f"{hint}_shape")], hint, elem,
                         list(value.shape))

    def affine_map(self, flat: str, elem: int, batch, affine, read: list[int] | None = None, scaling=None,
                   pieces: list = (), hint: str = "mapped") -> str:
        """``flat`` [batch, p] through ``affine`` (an ``AffineMap``): x @ weight + bias, [batch, q].
        ``read``: the only elements of x the map may read (0 * inf elsewhere would be NaN); with
        ``scaling``, weight and bias follow the dims (``scaled``: weight row-major, then bias)."""
        weight, bias = affine.weight, affine.bias
        q = weight.shape[1]
        rows = np.arange(weight.shape[0]) if read is None else np.array(read)
        if read is not None:
            flat = self.node("Gather", [flat, self.const(read, f"{hint}_read")], f"{hint}_read", elem,
                             [batch, len(read)], axis=1)
        if scaling is not None:
            select = (rows[:, None] * q + np.arange(q)[None, :]).reshape(-1)
            scaled = self.scaled(scaling, pieces, elem, select, f"{hint}_weight")
            weight = self.node("Reshape", [scaled, self.const([len(rows), q], f"{hint}_shape")], f"{hint}_weight",
                               elem, [len(rows), q])
            bias = self.scaled(scaling, pieces, elem, affine.weight.size + np.arange(q), f"{hint}_bias")
        else:
            dtype = helper.tensor_dtype_to_np_dtype(elem)
            weight = self.ctx.add_constant(weight[rows].astype(dtype), f"{hint}_weight")
            bias = self.ctx.add_constant(bias.astype(dtype), f"{hint}_bias") if np.any(bias) else None
        out = self.node("MatMul", [flat, weight], hint, elem, [batch, q])
        return out if bias is None else self.node("Add", [out, bias], hint, elem, [batch, q])

