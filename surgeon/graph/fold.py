"""Constant values: initializers, Constant nodes, Shape of statically shaped values, and small
computations over those (the Shape -> Gather -> Concat chains exporters write for sizes).

The folder is told how to read a tensor and how to look up a value's shape (callables), so
this module knows nothing of files or shape inference.

Memory follows the graph, not the weights: a constant is sized from its dims before it is
read, and one larger than ``MAX_READ`` elements is never read (it is simply not known here);
a node is folded only when a bound on its output, worked out from its inputs' shapes, is
small; and large values read are kept in a cache of bounded size, read again when needed.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .index import GraphIndex
from .node import Node, shape_range

# Ops folded when all their inputs are known; only shape-sized data is ever folded.
_FOLDABLE = {
    "Identity", "Cast", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Reshape", "Add", "Sub",
    "Mul", "Div", "Neg", "Floor", "Ceil", "Equal", "Where", "ConstantOfShape", "Range", "Expand",
    "ReduceProd", "Max", "Min", "Abs", "Transpose", "Flatten", "Size", "Not", "And", "Or", "Less",
    "Greater", "Sqrt", "Pow", "Mod", "Tile", "Split", "CastLike",
}
_BROADCAST = {"Add", "Sub", "Mul", "Div", "Equal", "Where", "Max", "Min", "And", "Or", "Less", "Greater",
              "Pow", "Mod"}
_MAX_ELEMENTS = 1 << 16  # computed values: shape-sized
MAX_READ = 1 << 22  # constants read as they are (a dynamo base grid of 1024 x 1024 is 3M)
_CACHE_BYTES = 64 << 20  # values over _MAX_ELEMENTS kept at once; the rest are read again


def _numel(dims) -> int | None:
    dims = [int(d) for d in dims]
    return None if any(d < 0 for d in dims) else math.prod(dims)


def constant_size(node: Node) -> int | None:
    """Elements of a ``Constant`` node's value, from its attribute (nothing decoded)."""
    for attr in node.proto.attribute:
        if attr.name == "value":
            return _numel(attr.t.dims)
        if attr.name in ("value_floats", "value_ints"):
            return len(attr.floats) + len(attr.ints)
        if attr.name in ("value_float", "value_int"):
            return 1
    return None


def constant_attribute(node: Node) -> np.ndarray | None:
    """The value of a ``Constant`` node."""
    for attr in node.proto.attribute:
        if attr.name == "value":
            return numpy_helper.to_array(attr.t)
        if attr.name == "value_float":
            return np.array(attr.f, dtype=np.float32)
        if attr.name == "value_floats":
            return np.array(list(attr.floats), dtype=np.float32)
        if attr.name == "value_int":
            return np.array(attr.i, dtype=np.int64)
        if attr.name == "value_ints":
            return np.array(list(attr.ints), dtype=np.int64)
    return None


class ConstantFolder:
    """Answers "is this value known before run time, and what is it?" with a cache."""

    def __init__(self, read_tensor: Callable[[TensorProto], np.ndarray],
                 shape_of: Callable[[str], "tuple | None"], opset: int):
        """``read_tensor(tensor) -> array``; ``shape_of(value) -> (elem_type, dims) | None``."""
        self.read_tensor = read_tensor
        self.shape_of = shape_of
        self.cache: dict[str, np.ndarray | None] = {}  # small values, and the unknown ones
        self._large: OrderedDict[str, np.ndarray] = OrderedDict()  # least recently used first
        self.opset = opset

    def value(self, index: GraphIndex, name: str) -> np.ndarray | None:
        if not name:
            return None
        if name in self.cache:
            return self.cache[name]
        if name in self._large:
            self._large.move_to_end(name)
            return self._large[name]
        self.cache[name] = None  # guards against cycles in malformed graphs
        result = self._compute(index, name)
        if result is not None and result.size > _MAX_ELEMENTS:
            del self.cache[name]
            self._keep(name, result)
        else:
            self.cache[name] = result
        return result

    def too_large(self, index: GraphIndex, name: str) -> int | None:
        """The element count of a constant that ``value`` will not read, else None."""
        tensor = index.find_initializer(name) if name else None
        if tensor is not None:
            size = _numel(tensor.dims)
        else:
            node = index.find_producer(name) if name else None
            size = constant_size(node) if node is not None and node.is_op("Constant") else None
        return size if size is not None and size > MAX_READ else None

    def _keep(self, name: str, array: np.ndarray) -> None:
        self._large[name] = array
        total = sum(a.nbytes for a in self._large.values())
        while total > _CACHE_BYTES and len(self._large) > 1:
            _, dropped = self._large.popitem(last=False)
            total -= dropped.nbytes

    def _compute(self, index: GraphIndex, name: str) -> np.ndarray | None:
        tensor = index.find_initializer(name)
        if tensor is not None:
            size = _numel(tensor.dims)  # sized before reading: a 2 GB weight is never read
            return self.read_tensor(tensor) if size is not None and size <= MAX_READ else None
        scope = index  # the graph whose node computes the value (bodies read outer values)
        while scope is not None and name not in scope.producer:
            scope = scope.parent
        if scope is None:
            return None
        node = scope.producer[name]
        if node.is_op("Constant"):
            size = constant_size(node)
            return constant_attribute(node) if size is not None and size <= MAX_READ else None
        if node.is_op("Shape"):
            info = self.shape_of(node.inputs[0])
            if info is None or not _static(info[1]):
                return None
            start, end = shape_range(node, len(info[1]))
            return np.array(info[1][start:end], dtype=np.int64)
        if node.is_op("Size"):
            info = self.shape_of(node.inputs[0])
            if info is None or not _static(info[1]):
                return None
            return np.array(int(np.prod(info[1])), dtype=np.int64)
        if node.domain not in ("", "ai.onnx") or node.op_type not in _FOLDABLE:
            return None
        inputs = []
        for inp in node.inputs:
            if not inp:
                inputs.append(None)
                continue
            value = self.value(scope, inp)
            if value is None or value.size > _MAX_ELEMENTS:
                return None
            inputs.append(value)
        bound = _output_bound(node, inputs)
        if bound is None or bound > _MAX_ELEMENTS:  # before computing: Expand or Tile can explode
            return None
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):  # overflow is not news here
                warnings.simplefilter("ignore")
                outputs = _run_node(node, inputs, self.opset)
        except Exception:  # a node the reference evaluator cannot run is simply not folded
            return None
        for out_name, out in zip(node.outputs, outputs):
            if out_name and out_name != name and out.size <= _MAX_ELEMENTS:
                self.cache[out_name] = out
        out = outputs[node.outputs.index(name)]
        return out if out.size <= _MAX_ELEMENTS else None


def _static(dims) -> bool:
    return dims is not None and all(isinstance(d, int) for d in dims)


def _ints(value: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _output_bound(node: Node, inputs: list) -> int | None:
    """At most how many elements any output of ``node`` holds, from its inputs alone; None
    when the inputs cannot make a valid node (it is then not folded)."""
    op = node.op_type
    given = [v for v in inputs if v is not None]
    try:
        if op in _BROADCAST:
            return math.prod(np.broadcast_shapes(*(v.shape for v in given)))
        if op == "ConstantOfShape":
            return _numel(_ints(inputs[0])) if inputs and inputs[0] is not None else 1
        if op == "Expand":
            return math.prod(np.broadcast_shapes(inputs[0].shape, tuple(_ints(inputs[1]))))
        if op == "Tile":
            return _numel([inputs[0].size, *_ints(inputs[1])])
        if op == "Range":
            start, limit, delta = (float(np.asarray(v).reshape(-1)[0]) for v in inputs[:3])
            return max(0, math.ceil((limit - start) / delta)) if delta and math.isfinite(limit - start) else None
        if op == "Gather":
            data, indices = inputs[0], inputs[1]
            axis = int(node.attr("axis", 0))
            return indices.size * data.size // max(1, data.shape[axis])
        if op == "Concat":
            return sum(v.size for v in given)
    except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError):
        return None
    return max((v.size for v in given), default=1)  # the rest output at most what they read


def _run_node(node: Node, inputs: list, opset: int) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator  # imported only when something needs folding

    names = [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)]
    outs = [f"o{k}" for k in range(len(node.outputs))]
    proto = helper.make_node(node.op_type, names, outs)
    proto.attribute.extend(node.proto.attribute)
    graph = helper.make_graph(
        [proto], "fold",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in zip(names, inputs) if v is not None],
        [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {n: v for n, v in zip(names, inputs) if v is not None}
    return [np.asarray(o) for o in ReferenceEvaluator(model).run(None, feeds)]
