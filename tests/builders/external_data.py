"""Models written to files with their weights in external data: the shipped STN sample, and
``weighted_warp_model`` with an external-data file laid out by hand (so that tests can corrupt
offsets, lengths and locations); and small edits of such models."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .warps import weighted_warp_model

STN_SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "samples", "models", "stn_ts_opset20_2d.onnx")


def stn_sample_with_external_data(folder, big_elements: int = 0) -> str:
    """The STN sample saved in ``folder`` with every weight in ``stn.onnx.data``; ``big_elements``
    adds a float32 weight of that many elements, read by one more output (``w_sum``)."""
    model = onnx.load(STN_SAMPLE)
    if big_elements:
        weight = numpy_helper.from_array(np.full(big_elements, 0.5, np.float32), "big_weight")
        model.graph.initializer.append(weight)
        model.graph.node.append(helper.make_node("ReduceSum", ["big_weight"], ["w_sum"], name="w_sum", keepdims=0))
        model.graph.output.append(helper.make_tensor_value_info("w_sum", TensorProto.FLOAT, []))
    path = os.path.join(os.fspath(folder), "stn.onnx")
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="stn.onnx.data",
              size_threshold=0)
    return path


def external_tensor_names(model: onnx.ModelProto) -> list[str]:
    """The initializers whose bytes live in external data."""
    return [t.name for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]


def move_to_external_data(model: onnx.ModelProto, folder: Path, location: str, names=("w",)) -> None:
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
        set_external_data(tensor, location=location, offset=str(offset), length=str(len(raw)))
    (folder / location).write_bytes(bytes(blob))


def set_external_data(tensor: TensorProto, **entries) -> None:
    """Set (or, with None, drop) external_data entries of a tensor."""
    current = {e.key: e.value for e in tensor.external_data}
    current.update(entries)
    del tensor.external_data[:]
    for key, value in current.items():
        if value is not None:
            tensor.external_data.add(key=key, value=value)


def initializer_named(model: onnx.ModelProto, name: str) -> TensorProto:
    """The model's initializer called ``name``."""
    return next(t for t in model.graph.initializer if t.name == name)


def write_model(model: onnx.ModelProto | bytes, path: Path) -> Path:
    """The model (or raw bytes) written to ``path``, as is."""
    path.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    return path


def weighted_warp_file(folder: Path, name: str = "m.onnx", data_file: str = "m.onnx.data", **entries) -> Path:
    """weighted_warp_model written to ``folder`` with ``w`` in ``data_file``; ``entries`` then
    overwrite its external_data (``location="../x"``, ``offset="abc"``, None to drop one)."""
    model = weighted_warp_model()
    move_to_external_data(model, folder, data_file)
    if entries:
        set_external_data(initializer_named(model, "w"), **entries)
    return write_model(model, folder / name)


def with_value_renamed(model: onnx.ModelProto, old: str, new: str) -> onnx.ModelProto:
    """Every use of a value name replaced (inputs, outputs, nodes, initializers)."""
    g = model.graph
    for node in g.node:
        node.input[:] = [new if v == old else v for v in node.input]
        node.output[:] = [new if v == old else v for v in node.output]
    for vi in (*g.input, *g.output, *g.value_info, *g.initializer):
        if vi.name == old:
            vi.name = new
    return model
