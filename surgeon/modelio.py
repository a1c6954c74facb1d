"""Loading and saving models safely.

- Weights kept in external data are not read at load: the engine reads the few constants it
  needs on demand and the writer copies the rest file-to-file, so a 3 GB model costs little more
  than a 30 MB one.
- An external-data location that leaves the model's folder is refused.
- Output is written to temp files and renamed into place; on any error nothing is left behind.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto, numpy_helper

from .datafile import DataFileWriter, ExternalRef
from .errors import SurgeonError
from .graph.node import subgraphs_of
from .wire import tensor_nbytes, write_model

# Protobuf refuses to serialise a message of 2 GiB or more; leave room for the graph itself.
PROTOBUF_LIMIT = 2**31 - 64 * 2**20
# Tensors at least this large go to the external data file when writing external data.
EXTERNAL_THRESHOLD = 1024


@dataclass
class LoadedModel:
    """A model and where its external tensors live (name -> file range)."""

    proto: ModelProto
    path: str | None = None
    external: dict[str, ExternalRef] = field(default_factory=dict)  # keyed by tensor name

    @property
    def base_dir(self) -> str:
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


def iter_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """Every initializer, in this graph and in every subgraph (If/Loop/Scan bodies)."""
    yield from graph.initializer
    for node in graph.node:
        for body in subgraphs_of(node):
            yield from iter_tensors(body)


def _external_info(tensor: TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in tensor.external_data}


def _resolve_location(base_dir: str, tensor: TensorProto) -> ExternalRef:
    info = _external_info(tensor)
    location = info.get("location", "")
    if not location:
        raise SurgeonError(f"tensor {tensor.name!r} is marked external but names no location")
    norm = os.path.normpath(location)
    if os.path.isabs(location) or norm == ".." or norm.startswith(".." + os.sep):
        raise SurgeonError(
            f"tensor {tensor.name!r}: external data location {location!r} leaves the model's folder; refused"
        )
    full = os.path.join(base_dir, norm)
    if not os.path.isfile(full):
        raise SurgeonError(f"tensor {tensor.name!r}: external data file {location!r} not found next to the model")
    size = os.path.getsize(full)
    offset = int(info.get("offset", 0) or 0)
    if "length" in info:
        length = int(info["length"])
    else:
        length = size - offset
    if offset < 0 or length < 0 or offset + length > size:
        raise SurgeonError(
            f"tensor {tensor.name!r}: external data range {offset}+{length} lies outside {location!r} ({size} bytes)"
        )
    return ExternalRef(full, offset, length)


def load_model(path: str | os.PathLike) -> LoadedModel:
    """Read and check a model file; external tensors are located and checked, not read."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise SurgeonError(f"{path}: no such file")
    if os.path.isdir(path):
        raise SurgeonError(f"{path}: is a folder, not a model file")
    if os.path.getsize(path) == 0:
        raise SurgeonError(f"{path}: file is empty")
    try:
        with open(path, "rb") as f:
            proto = onnx.load_model_from_string(f.read())
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise SurgeonError(f"{path}: not a valid ONNX model (truncated or not protobuf: {exc})") from None
    except OSError as exc:
        raise SurgeonError(f"{path}: cannot read ({exc.strerror})") from None
    if proto.ir_version <= 0 or not proto.HasField("graph") or not proto.opset_import:
        raise SurgeonError(f"{path}: not an ONNX model (no IR version, graph or opset import)")
    loaded = LoadedModel(proto, path)
    for tensor in iter_tensors(proto.graph):
        if tensor.data_location == TensorProto.EXTERNAL:
            loaded.external[tensor.name] = _resolve_location(loaded.base_dir, tensor)
    check_graph(proto, path)
    return loaded


def load_model_proto(model: ModelProto | LoadedModel | str | os.PathLike) -> LoadedModel:
    """Accept a path, a ModelProto or a LoadedModel (library entry points take any of them)."""
    if isinstance(model, LoadedModel):
        return model
    if isinstance(model, ModelProto):
        loaded = LoadedModel(model)
        for tensor in iter_tensors(model.graph):
            if tensor.data_location == TensorProto.EXTERNAL:
                raise SurgeonError(
                    f"tensor {tensor.name!r} refers to external data, but the model was given in memory: "
                    "pass its path instead"
                )
        return loaded
    return load_model(model)


def check_graph(proto: ModelProto, label: str = "model") -> None:
    """onnx.checker on the graph structure, without copying the weights.

    The checker serialises the whole model; for a model with hundreds of MB of weights that
    doubles memory. Initializers become typed graph inputs in a skeleton copy instead.
    """
    skeleton = skeleton_model(proto)
    try:
        onnx.checker.check_model(skeleton)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SurgeonError(f"{label}: fails the ONNX checker: {first}") from None


def skeleton_model(proto: ModelProto, keep_small: int = 0) -> ModelProto:
    """A copy of the model whose top-level initializers are typed inputs (no data).

    Initializers with at most ``keep_small`` elements keep their data, so shape inference can
    read small shape tensors.
    """
    skeleton = ModelProto()
    for fieldname in ("ir_version", "producer_name", "producer_version", "domain", "model_version"):
        setattr(skeleton, fieldname, getattr(proto, fieldname))
    skeleton.opset_import.extend(proto.opset_import)
    skeleton.functions.extend(proto.functions)
    g, src = skeleton.graph, proto.graph
    g.name = src.name
    g.node.extend(src.node)
    g.input.extend(src.input)
    g.output.extend(src.output)
    g.value_info.extend(src.value_info)
    listed = {i.name for i in src.input}
    for init in src.initializer:
        numel = math.prod(init.dims)
        if numel <= keep_small and init.data_location != TensorProto.EXTERNAL:
            g.initializer.append(init)
        elif init.name not in listed:
            vi = g.input.add()  # built in place: make_tensor_value_info costs 3x more per weight
            vi.name = init.name
            tensor_type = vi.type.tensor_type
            tensor_type.elem_type = init.data_type
            shape = tensor_type.shape
            shape.SetInParent()  # a scalar has no dims, but its shape must still be present
            for d in init.dims:
                shape.dim.add().dim_value = d
    return skeleton


def tensor_to_array(tensor: TensorProto, loaded: LoadedModel | None = None) -> np.ndarray:
    """A tensor's value, reading only its own byte range when it lives in external data."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return numpy_helper.to_array(tensor)
    ref = loaded.external.get(tensor.name) if loaded else None
    if ref is None:
        raise SurgeonError(f"tensor {tensor.name!r}: external data cannot be located")
    with open(ref.path, "rb") as f:
        f.seek(ref.offset)
        raw = f.read(ref.length)
    copy = TensorProto()
    copy.CopyFrom(tensor)
    del copy.external_data[:]
    copy.data_location = TensorProto.DEFAULT
    copy.raw_data = raw
    return numpy_helper.to_array(copy)


def model_data_bytes(loaded: LoadedModel) -> int:
    return sum(tensor_nbytes(t) for t in iter_tensors(loaded.proto.graph))


def check_output_path(out_path: str, loaded: LoadedModel) -> None:
    """Refuse an output that would overwrite the input or one of its data files."""
    out_real = os.path.realpath(out_path)
    if loaded.path and out_real == os.path.realpath(loaded.path):
        raise SurgeonError(f"{out_path}: output is the input file; refusing to overwrite the input")
    data_real = out_real + ".data"
    for ref in loaded.external.values():
        if os.path.realpath(ref.path) in (out_real, data_real):
            raise SurgeonError(f"{out_path}: output would overwrite the input's external data {ref.path}")
    folder = os.path.dirname(out_real)
    if not os.path.isdir(folder):
        raise SurgeonError(f"{out_path}: output folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise SurgeonError(f"{out_path}: output folder {folder} is not writable")
    if os.path.isdir(out_real):
        raise SurgeonError(f"{out_path}: is a folder")


def _externalise(loaded: LoadedModel, data_fd: int, location: str, restore: bool, undo: list) -> None:
    """Point every large tensor at the data file ``data_fd``; ``undo`` gathers, as it goes,
    what puts them back (also when this fails half way)."""
    writer = DataFileWriter(data_fd)
    try:
        for tensor in iter_tensors(loaded.proto.graph):
            ref = loaded.external.get(tensor.name) if tensor.data_location == TensorProto.EXTERNAL else None
            if ref is not None:
                offset, length = writer.copy(ref), ref.length
                undo.append((tensor, None, list(tensor.external_data)))
            else:
                if tensor_nbytes(tensor) < EXTERNAL_THRESHOLD:
                    continue
                raw = tensor.raw_data if tensor.HasField("raw_data") else \
                    numpy_helper.from_array(numpy_helper.to_array(tensor)).raw_data
                offset, length = writer.write(raw), len(raw)
                if restore:  # the caller keeps using the model: put the data back afterwards
                    saved = TensorProto()
                    saved.CopyFrom(tensor)
                    undo.append((tensor, saved, None))
                del raw
                for fname in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                              "uint64_data", "string_data"):
                    tensor.ClearField(fname)
            del tensor.external_data[:]
            tensor.data_location = TensorProto.EXTERNAL
            for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
    finally:
        writer.close()


def _restore(undo) -> None:
    for tensor, saved, external in undo:
        if saved is not None:
            tensor.CopyFrom(saved)
        else:
            del tensor.external_data[:]
            tensor.external_data.extend(external)


def save_model(loaded: LoadedModel, out_path: str | os.PathLike, external_data: bool | None = None,
               restore: bool = True) -> None:
    """Write atomically. ``external_data=None`` keeps the input's choice, and turns it on past 2 GB.

    Writing external data points the model's tensors at the new file; ``restore`` puts them
    back afterwards (callers that discard the model pass False and save a copy of the weights).
    """
    out_path = os.fspath(out_path)
    check_output_path(out_path, loaded)
    # Sizing the weights from their dims: upb's ByteSize() encodes the whole model to count it.
    too_big = model_data_bytes(loaded) > PROTOBUF_LIMIT
    if external_data is None:
        external_data = bool(loaded.external) or too_big
    if not external_data and too_big:
        raise SurgeonError(f"{out_path}: model exceeds protobuf's 2 GB limit; write it with --external-data")
    folder = os.path.dirname(os.path.abspath(out_path))
    name = os.path.basename(out_path)
    temps: list[str] = []
    undo = []
    try:
        data_tmp = None
        if external_data:
            fd, data_tmp = tempfile.mkstemp(prefix=f".{name}.data.", suffix=".tmp", dir=folder)
            temps.append(data_tmp)
            try:
                _externalise(loaded, fd, name + ".data", restore, undo)
            finally:
                os.close(fd)
        else:
            _internalise(loaded)
        fd, model_tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        temps.append(model_tmp)
        with os.fdopen(fd, "wb") as f:
            write_model(loaded.proto, f)  # streamed: no model-sized buffer
        if data_tmp is not None:
            data_path = os.path.join(folder, name + ".data")
            os.replace(data_tmp, data_path)
            temps[temps.index(data_tmp)] = data_path  # removed again if the model cannot be placed
        os.replace(model_tmp, out_path)
        temps.clear()
    except OSError as exc:
        raise SurgeonError(f"{out_path}: cannot write ({exc.strerror or exc})") from None
    finally:
        for tmp in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        _restore(undo)


def _internalise(loaded: LoadedModel) -> None:
    """Read external tensors into the model (for writing a single self-contained file)."""
    for tensor in iter_tensors(loaded.proto.graph):
        if tensor.data_location == TensorProto.EXTERNAL:
            array = tensor_to_array(tensor, loaded)
            loaded.external.pop(tensor.name, None)
            del tensor.external_data[:]
            tensor.data_location = TensorProto.DEFAULT
            tensor.raw_data = numpy_helper.from_array(array).raw_data


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Reports and the like: same temp-then-rename rule as models."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise SurgeonError(f"{path}: cannot write ({exc.strerror or exc})") from None
