"""Constant values: initializers, Constant nodes, Shape of statically shaped values, and small
computations over those (the Shape -> Gather -> Concat chains exporters write for sizes).

The folder is told how to read a tensor and how to look up a value's shape (callables), so
this module knows nothing of files or shape inference."""

from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .index import GraphIndex
from .node import Node

# Ops folded when all their inputs are known; only shape-sized data is ever folded.
_FOLDABLE = {
    "Identity", "Cast", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Reshape", "Add", "Sub",
    "Mul", "Div", "Neg", "Floor", "Ceil", "Equal", "Where", "ConstantOfShape", "Range", "Expand",
    "ReduceProd", "Max", "Min", "Abs", "Transpose", "Flatten", "Size", "Not", "And", "Or", "Less",
    "Greater", "Sqrt", "Pow", "Mod", "Tile", "Split", "CastLike",
}
_MAX_ELEMENTS = 1 << 16


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
        self.cache: dict[str, np.ndarray | None] = {}
        self.opset = opset

    def value(self, index: GraphIndex, name: str) -> np.ndarray | None:
        if not name:
            return None
        if name in self.cache:
            return self.cache[name]
        self.cache[name] = None  # guards against cycles in malformed graphs
        result = self._compute(index, name)
        self.cache[name] = result
        return result

    def _compute(self, index: GraphIndex, name: str) -> np.ndarray | None:
        tensor = index.find_initializer(name)
        if tensor is not None:
            return self.read_tensor(tensor)
        scope = index  # the graph whose node computes the value (bodies read outer values)
        while scope is not None and name not in scope.producer:
            scope = scope.parent
        if scope is None:
            return None
        node = scope.producer[name]
        if node.is_op("Constant"):
            return constant_attribute(node)
        if node.is_op("Shape"):
            info = self.shape_of(node.inputs[0])
            if info is None or not _static(info[1]):
                return None
            dims = np.array(info[1], dtype=np.int64)
            start, end = node.attr("start", 0), node.attr("end", None)
            return dims[start:end]
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
        try:
            outputs = _run_node(node, inputs, self.opset)
        except Exception:  # a node the reference evaluator cannot run is simply not folded
            return None
        for out_name, out in zip(node.outputs, outputs):
            if out_name and out_name != name:
                self.cache[out_name] = out
        out = outputs[node.outputs.index(name)]
        return out if out.size <= _MAX_ELEMENTS else None


def _static(dims) -> bool:
    return dims is not None and all(isinstance(d, int) for d in dims)


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
