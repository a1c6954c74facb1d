"""The one valid model every corpus case starts from, and a writer that puts its weights in an
external-data file laid out by hand (so cases can corrupt offsets, lengths and locations)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

H = W = 8


def base_model(opset: int = 20) -> onnx.ModelProto:
    """y = GridSample(x + w, AffineGrid(theta, size)): a chain the built-in pattern fuses, and a
    weight worth keeping in external data."""
    weight = numpy_helper.from_array(np.linspace(-1, 1, H * W, dtype=np.float32).reshape(1, 1, H, W), "w")
    size = numpy_helper.from_array(np.array([1, 1, H, W], np.int64), "size")
    nodes = [
        helper.make_node("Add", ["x", "w"], ["xw"], name="add"),
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="grid", align_corners=0),
        helper.make_node("GridSample", ["xw", "grid"], ["y"], name="sample", align_corners=0),
    ]
    graph = helper.make_graph(
        nodes, "base",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, H, W]),
         helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, H, W])],
        [weight, size])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def externalise(model: onnx.ModelProto, folder: Path, location: str, names=("w",)) -> None:
    """Move the named initializers' bytes to ``folder/location`` (offset and length recorded)."""
    blob = bytearray()
    for tensor in model.graph.initializer:
        if tensor.name not in names:
            continue
        raw = numpy_helper.to_array(tensor).tobytes()
        offset = len(blob)
        blob += raw
        tensor.ClearField("raw_data")
        tensor.ClearField("float_data")
        tensor.data_location = TensorProto.EXTERNAL
        set_external(tensor, location=location, offset=str(offset), length=str(len(raw)))
    (folder / location).write_bytes(bytes(blob))


def set_external(tensor: TensorProto, **entries) -> None:
    """Set (or, with None, drop) external_data entries of a tensor."""
    current = {e.key: e.value for e in tensor.external_data}
    current.update(entries)
    del tensor.external_data[:]
    for key, value in current.items():
        if value is not None:
            tensor.external_data.add(key=key, value=value)


def initializer(model: onnx.ModelProto, name: str) -> TensorProto:
    return next(t for t in model.graph.initializer if t.name == name)


def write(model: onnx.ModelProto | bytes, path: Path) -> Path:
    path.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    return path


def external_model(folder: Path, name: str = "m.onnx", data_file: str = "m.onnx.data", **entries) -> Path:
    """The base model with ``w`` in ``data_file``; ``entries`` then overwrite its external_data
    (``location="../x"``, ``offset="abc"``, None to drop one)."""
    model = base_model()
    externalise(model, folder, data_file)
    if entries:
        set_external(initializer(model, "w"), **entries)
    return write(model, folder / name)


def renamed(model: onnx.ModelProto, old: str, new: str) -> onnx.ModelProto:
    """Every use of a value name replaced (inputs, outputs, nodes, initializers)."""
    g = model.graph
    for node in g.node:
        node.input[:] = [new if v == old else v for v in node.input]
        node.output[:] = [new if v == old else v for v in node.output]
    for vi in (*g.input, *g.output, *g.value_info, *g.initializer):
        if vi.name == old:
            vi.name = new
    return model


def fsname(raw: bytes) -> str:
    """A file name from raw bytes, as Python hands undecodable bytes from argv to a program."""
    return os.fsdecode(raw)
