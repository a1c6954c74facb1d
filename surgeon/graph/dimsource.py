"""Which dim a dim is, by the ops that make it: what the model itself enforces.

``dim_source(value, axis)`` follows a dim back through ops that copy it unchanged to the dim it
is a copy of: a Reshape whose target entry is read off another value's ``Shape`` (the way every
exporter writes ``x.reshape(-1, C, H, W)``), shape-keeping elementwise ops, Transpose, a Pad
whose pads on that axis are 0 (``F.pad``'s pads as TorchScript computes them: a concatenation
with zeros, reshaped, reversed and transposed, followed element by element). Two dims
with one source are equal in every run, whatever the sizes: a fact proved from the ops, not a
declared name (two inputs both declaring ``H`` may differ). Anything else is its own source.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .node import Node, shape_range

# Ops whose output 0 has input 0's shape, whatever its values.
_SAME_SHAPE = frozenset({
    "Abs", "Acos", "Asin", "Atan", "Cast", "CastLike", "Ceil", "Celu", "Cos", "Cosh", "DequantizeLinear",
    "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN",
    "LeakyRelu", "Log", "Mish", "Neg", "Not", "QuantizeLinear", "Reciprocal", "Relu", "Round", "Selu",
    "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
})
_INT_TYPES = (6, 7)  # int32, int64: a cast to these keeps any dim a model can hold
MAX_STEPS = 64  # a chain longer than this is left as its own source

Producer = Callable[[str], "Node | None"]
Constant = Callable[[str], "np.ndarray | None"]
Shape = Callable[[str], "tuple | None"]


class DimSources:
    """``dim_source`` over one graph: ``producer``, ``constant`` and ``shape`` are the graph's
    (``shape``: dims as ints, names or None; None where even the rank is unknown)."""

    def __init__(self, producer: Producer, constant: Constant, shape: Shape):
        self._producer, self._constant, self._shape = producer, constant, shape

    def _rank(self, value: str) -> int | None:
        dims = self._shape(value)
        return None if dims is None else len(dims)

    def same_dim(self, a: str, axis_a: int, b: str, axis_b: int) -> bool:
        """Whether ``a``'s dim ``axis_a`` equals ``b``'s dim ``axis_b`` in every run."""
        first, second = self.dim_source(a, axis_a), self.dim_source(b, axis_b)
        return first is not None and first == second

    def dim_source(self, value: str, axis: int) -> tuple[str, int] | None:
        """(value, axis) this dim copies, followed as far as the ops prove it."""
        axis = self._axis(value, axis)
        if axis is None:
            return None
        for _ in range(MAX_STEPS):
            node = self._producer(value)
            step = self._step(node, axis) if node is not None else None
            if step is None:
                return value, axis
            value, axis = step
        return value, axis

    def _step(self, node: Node, axis: int) -> tuple[str, int] | None:
        op, ins = node.op_type, node.inputs
        if node.domain not in ("", "ai.onnx"):
            return None
        if op in _SAME_SHAPE and ins:
            return ins[0], axis
        if op == "Transpose":
            perm = node.attrs.get("perm")
            rank = self._rank(ins[0])
            if perm is None and rank is not None:
                perm = list(range(rank))[::-1]
            return (ins[0], int(perm[axis])) if perm is not None and axis < len(perm) else None
        if op == "Reshape" and len(ins) > 1:
            entry = self._element(ins[1], axis)
            if isinstance(entry, int):  # 0 copies the data's own dim unless allowzero (onnxsim writes [-1, 3, 0, 0])
                return (ins[0], axis) if entry == 0 and not node.attrs.get("allowzero", 0) else None
            if entry is None:
                return None
            # An entry of 0 copies the data's own dim (allowzero=0): the same dim only when the
            # data's dim at this axis is that entry's source too.
            if node.attrs.get("allowzero", 0) or self.dim_source(ins[0], axis) == self.dim_source(*entry):
                return entry
        if op == "Pad":  # no padding before or after this axis: the data's own dim
            rank = self._rank(ins[0])
            pads = node.attrs.get("pads")
            if rank is None or (pads is None and (len(ins) < 2 or not ins[1])) or (len(ins) > 3 and ins[3]):
                return None  # opset 18's axes input: the pads name only some axes
            ends = [pads[axis], pads[axis + rank]] if pads is not None else \
                [self._element(ins[1], axis), self._element(ins[1], axis + rank)]
            return (ins[0], axis) if ends == [0, 0] else None
        return None

    def _element(self, value: str, index: int, depth: int = 0) -> tuple[str, int] | int | None:
        """Which dim element ``index`` of the 1-D int tensor ``value`` is a copy of (an int:
        the element is that constant)."""
        known = self._constant(value)
        if known is not None:
            flat = np.asarray(known).reshape(-1)
            return int(flat[index]) if index < flat.size and flat.dtype.kind in "iu" else None
        node = self._producer(value)
        if node is None or depth > MAX_STEPS or node.domain not in ("", "ai.onnx"):
            return None
        op, ins = node.op_type, node.inputs
        if op == "Shape":
            rank = self._rank(ins[0])
            if rank is None:
                return None
            start, end = shape_range(node, rank)
            return (ins[0], start + index) if start + index < end else None
        if op == "Cast":
            return self._element(ins[0], index, depth + 1) if node.attrs.get("to") in _INT_TYPES else None
        if op in ("Identity", "Reshape", "Flatten"):  # the same elements in the same (row-major) order
            return self._element(ins[0], index, depth + 1)
        if op == "ConstantOfShape":
            value = node.attrs.get("value")
            fill = np.asarray(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
            return int(fill[0]) if fill.size == 1 and float(fill[0]).is_integer() else None
        if op == "Transpose":
            dims = self._static(ins[0])
            perm = node.attrs.get("perm") or (list(range(len(dims)))[::-1] if dims else None)
            if dims is None or perm is None:
                return None
            out = np.unravel_index(index, [dims[p] for p in perm])
            back = [0] * len(dims)
            for i, p in enumerate(perm):
                back[p] = int(out[i])
            return self._element(ins[0], int(np.ravel_multi_index(back, dims)), depth + 1)
        if op in ("Unsqueeze", "Squeeze"):
            return self._element(ins[0], 0, depth + 1) if index == 0 and self._length(value) == 1 else None
        if op == "Concat":
            for part in ins:
                length = self._length(part)
                if length is None:
                    return None
                if index < length:
                    return self._element(part, index, depth + 1)
                index -= length
            return None
        if op == "Gather" and node.attrs.get("axis", 0) == 0:
            picks = self._constant(ins[1])
            if picks is None:
                return None
            picks = np.asarray(picks).reshape(-1)
            length = self._length(ins[0])
            if index >= picks.size or length is None:
                return None
            pick = int(picks[index])
            return self._element(ins[0], pick + length if pick < 0 else pick, depth + 1)
        if op == "Slice":
            return self._sliced(node, index, depth)
        return None

    def _static(self, value: str) -> list[int] | None:
        """The static dims of a small int tensor: a constant's, else the declared or inferred ones,
        else a 1-D one's length (a Shape's, read off its input's rank)."""
        known = self._constant(value)
        if known is not None:
            return list(np.shape(known))
        dims = self._shape(value)
        if dims is not None and all(isinstance(d, int) for d in dims):
            return list(dims)
        length = self._length(value)
        return None if length is None else [length]

    def _sliced(self, node: Node, index: int, depth: int) -> tuple[str, int] | None:
        """An element of a Slice of a small int tensor of static dims, any axes and steps (ONNX clamps
        its bounds as Python's slices do)."""
        ins = node.inputs
        dims = self._static(ins[0])
        bounds = [np.reshape(self._constant(v), -1) if v and self._constant(v) is not None else None
                  for v in ins[1:5]]
        if dims is None or bounds[0] is None or bounds[1] is None or (len(ins) > 3 and ins[3] and bounds[2] is None) \
                or (len(ins) > 4 and ins[4] and bounds[3] is None):
            return None
        axes = [int(a) % len(dims) for a in bounds[2]] if len(ins) > 3 and ins[3] else list(range(len(bounds[0])))
        steps = [int(t) for t in bounds[3]] if len(ins) > 4 and ins[4] else [1] * len(axes)
        picks = [list(range(d)) for d in dims]
        for a, start, end, step in zip(axes, bounds[0], bounds[1], steps):
            picks[a] = list(range(dims[a]))[slice(int(start), int(end), step)] if step else []
        out = [len(p) for p in picks]
        if index >= int(np.prod(out)):
            return None
        at = np.unravel_index(index, out)
        source = [picks[a][int(i)] for a, i in enumerate(at)]
        return self._element(ins[0], int(np.ravel_multi_index(source, dims)), depth + 1)

    def _length(self, value: str) -> int | None:
        """The static length of a 1-D (or scalar: 1) int tensor."""
        known = self._constant(value)
        if known is not None:
            return int(np.asarray(known).size)
        node = self._producer(value)
        if node is not None and node.op_type == "Shape" and node.domain in ("", "ai.onnx"):
            rank = self._rank(node.inputs[0])
            if rank is None:
                return None
            start, end = shape_range(node, rank)
            return max(0, end - start)
        dims = self._shape(value)
        if dims is not None and len(dims) <= 1:
            return 1 if not dims else (dims[0] if isinstance(dims[0], int) else None)
        return None

    def _axis(self, value: str, axis: int) -> int | None:
        if axis >= 0:
            return axis
        rank = self._rank(value)
        return axis + rank if rank is not None and axis + rank >= 0 else None
