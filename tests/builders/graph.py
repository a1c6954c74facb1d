"""The two ways the tests put a model together: ``onnx_model`` from nodes and value infos, and
``GraphBuilder`` for graphs written op by op (``g.op("Add", a, b)`` returns the output name)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
CUSTOM_OPS = {"custom.ops": 1}  # the opset import a model with surgeon's custom nodes carries


def value_info(name: str, dims=("N", 3), elem: int = FLOAT) -> onnx.ValueInfoProto:
    """A tensor value info; ``dims`` None: no shape."""
    return helper.make_tensor_value_info(name, elem, None if dims is None else list(dims))


def _as_value_info(value) -> onnx.ValueInfoProto:
    if isinstance(value, onnx.ValueInfoProto):
        return value
    if len(value) == 2:  # (name, dims): float32
        return value_info(value[0], value[1])
    name, elem, dims = value
    return value_info(name, dims, elem)


def onnx_model(nodes, inputs, outputs, initializers=(), *, opset: int, domains=None, value_infos=(),
               functions=(), ir_version: int | None = None, name: str = "g") -> onnx.ModelProto:
    """A model of one graph. ``inputs``/``outputs``: value infos, or (name, dims) float32 pairs, or
    (name, elem, dims); ``domains``: other opset imports, {domain: version}; ``ir_version`` None:
    onnx.helper's."""
    graph = helper.make_graph(list(nodes), name, [_as_value_info(v) for v in inputs],
                              [_as_value_info(v) for v in outputs], initializer=list(initializers),
                              value_info=list(value_infos))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (domains or {}).items()]
    model = helper.make_model(graph, opset_imports=opsets, functions=list(functions))
    if ir_version is not None:
        model.ir_version = ir_version
    return model


class GraphBuilder:
    """A graph written op by op: ``g.op("Add", a, b)`` adds the node and returns its output name."""

    def __init__(self):
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def input(self, name: str, dims, elem=FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def const(self, array, hint: str = "c") -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values, hint: str = "i") -> str:
        return self.const(np.array(values, dtype=np.int64), hint)

    def op(self, op_type: str, *inputs, outputs: int = 1, domain: str = "", out: str | None = None, **attrs):
        names = [out] if out else [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=self.fresh(op_type),
                                           domain=domain or None, **attrs))
        return names[0] if outputs == 1 else names

    def output(self, name: str, elem=FLOAT, dims=None) -> None:
        self.outputs.append(helper.make_tensor_value_info(name, elem, dims))

    def model(self, opset: int, extra_opsets=()):
        """The model (IR version 9), graph "handmade"; ``extra_opsets``: (domain, version) pairs."""
        return onnx_model(self.nodes, self.inputs, self.outputs, self.inits, opset=opset, domains=dict(extra_opsets),
                          ir_version=9, name="handmade")
