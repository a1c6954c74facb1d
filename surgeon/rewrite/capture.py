"""Small, weight-free pictures of graph regions for reports (the HTML report draws them).

A region is a list of nodes. What is kept: each node's op type, domain, name, the value names it
reads and writes, and its attributes as short strings (a tensor attribute by its type and shape,
and by value only when it has at most ``SMALL`` elements); each value's type and shape as a
string, and the value of a small constant. Never a weight. Values are interned: nodes refer to
them by index, so a region of 60 nodes is a few kilobytes.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from ..graph import Node

MAX_NODES = 150  # a region beyond this is cut (``omitted`` says how many nodes were left out)
SMALL = 8  # constants with at most this many elements are shown by value
MAX_TEXT = 48  # an attribute value is cut to this many characters

_SHORT = {"FLOAT": "f32", "FLOAT16": "f16", "BFLOAT16": "bf16", "DOUBLE": "f64", "INT64": "i64", "INT32": "i32",
          "INT8": "i8", "UINT8": "u8", "BOOL": "bool", "INT16": "i16", "UINT16": "u16", "STRING": "str"}


def type_label(elem_type: int | None, dims) -> str:
    """``f32[1,3,32,32]``; unknown dims as ``?``, symbolic ones by name."""
    try:
        name = TensorProto.DataType.Name(elem_type) if elem_type else "?"
    except ValueError:
        name = "?"
    short = _SHORT.get(name, name.lower())
    if dims is None:
        return short
    return f"{short}[{','.join('?' if d is None else str(d) for d in dims)}]"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def array_label(array: np.ndarray) -> str:
    """A small array's value: ``[1, 16, 16, 2]``, ``0.5``; else its shape."""
    if array.size > SMALL:
        return f"{array.dtype.name}{list(array.shape)}"
    flat = array.reshape(-1).tolist()
    items = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in flat]
    return items[0] if array.ndim == 0 else "[" + ", ".join(items) + "]"


def tensor_label(tensor: TensorProto) -> str:
    """A tensor by value when small and stored in the model, else by type and shape."""
    count = int(np.prod(tensor.dims)) if tensor.dims else 1
    if count <= SMALL and tensor.data_location != TensorProto.EXTERNAL:
        try:
            return array_label(numpy_helper.to_array(tensor))
        except Exception:  # a malformed tensor is the checker's business, not the report's
            pass
    return "tensor " + type_label(tensor.data_type, list(tensor.dims))


def attribute_label(attr: AttributeProto) -> str:
    if attr.type == AttributeProto.TENSOR:
        return tensor_label(attr.t)
    if attr.type == AttributeProto.GRAPH:
        return f"graph ({len(attr.g.node)} nodes)"
    if attr.type == AttributeProto.GRAPHS:
        return f"{len(attr.graphs)} graphs"
    if attr.type == AttributeProto.SPARSE_TENSOR:
        return "sparse tensor"
    if attr.type in (AttributeProto.TENSORS, AttributeProto.SPARSE_TENSORS, AttributeProto.TYPE_PROTOS):
        return "[...]"
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif isinstance(value, list):
        value = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
        value = [float(f"{v:.4g}") if isinstance(v, float) else v for v in value]
    elif isinstance(value, float):
        value = float(f"{value:.4g}")
    return _cut(str(value))


def describe(nodes: list[Node], shape_of: Callable[[str], tuple | None],
             constant_of: Callable[[str], str | None] = lambda name: None) -> dict:
    """A region as plain data: ``{"nodes": [[op, domain, name, [in], [out], {attr: text}]],
    "values": [[name, type, constant]], "omitted": n}``; value references are indexes into
    ``values``. ``shape_of(name)`` gives (elem_type, dims) or None; ``constant_of(name)`` a label
    for a value that is a constant (an initializer), or None."""
    nodes = sorted(nodes, key=lambda n: n.position)
    kept = nodes[:MAX_NODES]
    index: dict[str, int] = {}
    values: list[list] = []

    def ref(name: str) -> int:
        if not name:
            return -1  # an absent optional input
        at = index.get(name)
        if at is None:
            at = index[name] = len(values)
            info = shape_of(name)
            values.append([name, type_label(*info) if info else "", constant_of(name) or ""])
        return at

    rows = []
    for node in kept:
        attrs = {a.name: attribute_label(a) for a in node.proto.attribute}
        if node.is_op("Constant") and "value" in attrs:
            for out in node.outputs:  # the value a Constant node makes is its label
                if out:
                    ref(out)
                    values[index[out]][2] = attrs["value"]
        rows.append([node.op_type, node.domain, node.name, [ref(v) for v in node.inputs],
                     [ref(v) for v in node.outputs], attrs])
    return {"nodes": rows, "values": values, "omitted": len(nodes) - len(kept)}


def neighbourhood(anchor: Node, producer_of: Callable[[str], Node | None], depth: int = 2,
                  limit: int = 12) -> list[Node]:
    """The anchor and the nodes feeding it, ``depth`` steps back (at most ``limit``): what a
    pattern that refused the anchor looked at first."""
    found = {id(anchor): anchor}
    frontier = [anchor]
    for _ in range(depth):
        nxt = []
        for node in frontier:
            for value in node.inputs:
                producer = producer_of(value) if value else None
                if producer is not None and id(producer) not in found and len(found) < limit:
                    found[id(producer)] = producer
                    nxt.append(producer)
        frontier = nxt
    return list(found.values())
