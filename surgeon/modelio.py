"""Loading and saving models safely.

- Weights kept in external data are not read at load: the engine reads the few constants it
  needs on demand and the writer copies the rest file-to-file, so a 3 GB model costs little more
  than a 30 MB one.
- An external-data location that leaves the model's folder (``../``, absolute, or through a
  symbolic link) is refused, and so is external data shorter than its tensor.
- No output may resolve to an input file (hard and symbolic links included): checked before
  anything is written. Outputs are written to temp files and renamed into place together; on
  any error nothing is left behind.
"""

from __future__ import annotations

import functools
import math
import os
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto, numpy_helper

from .datafile import DataFileWriter, ExternalRef, resolve
from .errors import SurgeonError
from .graph.node import subgraphs_of
from .wire import check_raw_size, tensor_nbytes, write_model

# Protobuf refuses to serialise a message of 2 GiB or more; leave room for the graph itself.
PROTOBUF_LIMIT = 2**31 - 64 * 2**20
# Tensors at least this large go to the external data file when writing external data.
EXTERNAL_THRESHOLD = 1024
_KNOWN_TYPES = set(TensorProto.DataType.values()) - {TensorProto.UNDEFINED}
_READ: dict[str, str] = {}  # every model and data file load_model has read in this process


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


def _nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node, bodies included (slow on large graphs: for the rare paths only)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for body in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                yield from _nodes(body)


def _names(proto: ModelProto) -> Iterator:
    """The names of a model (to find the one that is not UTF-8, once parsing said there is one)."""
    yield from (o.domain for o in proto.opset_import)
    for graph in [proto.graph] + [a.g for n in _nodes(proto.graph) for a in n.attribute if a.HasField("g")]:
        yield graph.name
        yield from (vi.name for vi in (*graph.input, *graph.output, *graph.value_info))
        yield from (d.dim_param for vi in graph.value_info for d in vi.type.tensor_type.shape.dim)
    for node in (*_nodes(proto.graph), *(n for f in proto.functions for n in f.node)):
        yield from (node.name, node.op_type, node.domain, *node.input, *node.output)
        yield from (a.name for a in node.attribute)


@functools.cache
def _strict_model_class():
    """ModelProto parsed as proto3, where protobuf itself checks every string is UTF-8 (onnx's
    proto2 messages hand an invalid one back as bytes, which nothing downstream expects)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    file = descriptor_pb2.FileDescriptorProto()
    onnx.onnx_ml_pb2.DESCRIPTOR.CopyToProto(file)
    file.syntax = "proto3"
    stack = list(file.message_type)
    while stack:
        message = stack.pop()
        stack.extend(message.nested_type)
        for fd in message.field:
            fd.ClearField("default_value")  # proto3 has none; parsing does not need them
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{file.package}.ModelProto"))


def check_text(skeleton: bytes, proto: ModelProto, label: str) -> None:
    """Every name is UTF-8, and only initializers live in external data (a Constant's tensor
    would be read relative to the working folder). ``skeleton``: the weight-free model."""
    try:
        _strict_model_class().FromString(skeleton)
    except DecodeError:
        bad = next((n for n in _names(proto) if type(n) is not str), None)
        raise SurgeonError(f"{label}: a name in the model is not valid UTF-8{f' ({bad!r})' if bad else ''}; "
                           "refused") from None
    if b"location" not in skeleton:  # the key every external reference carries
        return
    for node in (*_nodes(proto.graph), *(n for f in proto.functions for n in f.node)):
        for attr in node.attribute:
            if any(t.data_location == TensorProto.EXTERNAL for t in [attr.t, *attr.tensors]):
                raise SurgeonError(f"{label}: node {node.name!r} holds a constant in external data (only "
                                   "initializers may); refused")


def load_model(path: str | os.PathLike) -> LoadedModel:
    """Read and check a model file; external tensors are located and checked, not read."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise SurgeonError(f"{path}: no such file") from None
    except OSError as exc:
        raise SurgeonError(f"{path}: cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise SurgeonError(f"{path}: is a folder, not a model file")
    if not stat.S_ISREG(st.st_mode):
        raise SurgeonError(f"{path}: not a regular file")
    if st.st_size == 0:
        raise SurgeonError(f"{path}: file is empty")
    try:
        with open(path, "rb") as f:
            proto = onnx.load_model_from_string(f.read())
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise SurgeonError(f"{path}: not a valid ONNX model (truncated or not protobuf: {exc})") from None
    except OSError as exc:
        raise SurgeonError(f"{path}: cannot read ({exc.strerror})") from None
    loaded = LoadedModel(proto, path)
    check_model(loaded, path)
    _READ.update((os.path.abspath(p), what) for p, what in input_files(loaded).items())
    return loaded


def check_model(loaded: LoadedModel, label: str, structure: bool = True) -> None:
    """What a model must pass before anything reads it, and where its external data is.
    ``structure=False`` (models built in memory) skips the ONNX checker, as before."""
    proto = loaded.proto
    if structure and (proto.ir_version <= 0 or not proto.HasField("graph") or not proto.opset_import):
        raise SurgeonError(f"{label}: not an ONNX model (no IR version, graph or opset import)")
    skeleton = skeleton_model(proto).SerializeToString()
    check_text(skeleton, proto, label)
    for tensor in iter_tensors(proto.graph):
        if tensor.data_type not in _KNOWN_TYPES:
            raise SurgeonError(f"{label}: initializer {tensor.name!r} has an unknown element type ({tensor.data_type})")
        if any(d < 0 for d in tensor.dims):
            raise SurgeonError(f"{label}: initializer {tensor.name!r} has negative dims {list(tensor.dims)}")
        if tensor.data_location == TensorProto.EXTERNAL:
            if loaded.path is None:
                raise SurgeonError(f"tensor {tensor.name!r} refers to external data, but the model was given in "
                                   "memory: pass its path instead")
            if any(type(e.key) is not str or type(e.value) is not str for e in tensor.external_data):
                raise SurgeonError(f"{label}: tensor {tensor.name!r}: its external data location is not valid UTF-8")
            if tensor.name in loaded.external:  # the data is looked up by name
                raise SurgeonError(f"{label}: two initializers named {tensor.name!r} live in external data; refused")
            loaded.external[tensor.name] = resolve(tensor, loaded.base_dir)
    if structure:
        check_graph(skeleton, label)


def load_model_proto(model: ModelProto | LoadedModel | str | os.PathLike) -> LoadedModel:
    """Accept a path, a ModelProto or a LoadedModel (library entry points take any of them)."""
    if isinstance(model, LoadedModel):
        return model
    if isinstance(model, ModelProto):
        loaded = LoadedModel(model)
        check_model(loaded, "model", structure=False)
        return loaded
    return load_model(model)


def load_copy(model: ModelProto | LoadedModel | str | os.PathLike) -> LoadedModel:
    """As ``load_model_proto``, on a copy of a ModelProto: the caller's model is never modified."""
    if isinstance(model, ModelProto):
        copy = ModelProto()
        copy.CopyFrom(model)
        model = copy
    return load_model_proto(model)


def check_graph(model: ModelProto | bytes, label: str = "model") -> None:
    """onnx.checker on the graph structure, without copying the weights: give it the skeleton
    (``skeleton_model``; its bytes spare a copy). The checker serialises what it is given: for
    a model with hundreds of MB of weights that would double memory."""
    if isinstance(model, ModelProto):
        model = skeleton_model(model).SerializeToString()
    try:
        onnx.checker.check_model(model)
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


# onnx's data propagation spends ~200 bytes per element of any 1-D value it sees (a
# 550M-element weight: 110 GB), though only short vectors (sizes) are worth propagating.
_PROPAGATE_AT_MOST = 4096


def infer_skeleton(proto: ModelProto, keep_small: int = 64) -> ModelProto | None:
    """ONNX shape inference on the weight-free skeleton (None when it fails), with data
    propagation (sizes computed by Shape -> Gather -> Concat chains) unless a 1-D value of
    the graph is too long for it: then without."""
    skeleton = skeleton_model(proto, keep_small)
    try:
        plain = onnx.shape_inference.infer_shapes(skeleton)
        if _long_vector(plain.graph):
            return plain
        return onnx.shape_inference.infer_shapes(skeleton, data_prop=True)
    except Exception:  # inference is best effort: custom ops or odd models may upset it
        return None


def _long_vector(graph: onnx.GraphProto) -> bool:
    for vi in (*graph.input, *graph.output, *graph.value_info):
        dims = vi.type.tensor_type.shape.dim
        if len(dims) <= 1 and any(d.dim_value > _PROPAGATE_AT_MOST for d in dims):
            return True
    return False


def tensor_to_array(tensor: TensorProto, loaded: LoadedModel | None = None) -> np.ndarray:
    """A tensor's value, reading only its own byte range when it lives in external data."""
    if tensor.data_location == TensorProto.EXTERNAL:
        ref = loaded.external.get(tensor.name) if loaded else None
        if ref is None:
            raise SurgeonError(f"tensor {tensor.name!r}: external data cannot be located")
        with open(ref.path, "rb") as f:
            f.seek(ref.offset)
            raw = f.read(ref.length)
        if len(raw) != ref.length:
            raise SurgeonError(f"tensor {tensor.name!r}: external data file {ref.path} shrank while being read")
        copy = TensorProto()
        copy.CopyFrom(tensor)
        del copy.external_data[:]
        copy.data_location = TensorProto.DEFAULT
        copy.raw_data = raw
        tensor = copy
    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:  # a data field that does not fit the dims or type
        text = str(exc).strip().splitlines()
        raise SurgeonError(f"tensor {tensor.name!r}: its data does not fit its dims {list(tensor.dims)} and "
                           f"type ({text[0] if text else type(exc).__name__})") from None


def model_data_bytes(loaded: LoadedModel) -> int:
    return sum(tensor_nbytes(t) for t in iter_tensors(loaded.proto.graph))


def input_files(loaded: LoadedModel) -> dict[str, str]:
    """The files a model was read from, each with what it is: the model, its external data."""
    found = {loaded.path: "the input file"} if loaded.path else {}
    found.update((path, "the input's external data") for path in sorted({r.path for r in loaded.external.values()}))
    return found


def _same_file(a: str, b: str) -> bool:
    """Same path once links are resolved, or the same file under two names (a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_outputs(outputs: list[str], inputs: Mapping[str, str] | Iterable[str]) -> None:
    """Refuse, before anything is written, outputs that would land on an input file (through
    a symbolic or hard link too), on each other, or where they cannot be written. ``inputs``:
    paths, or {path: what it is} as ``input_files`` gives them."""
    inputs = inputs if isinstance(inputs, Mapping) else dict.fromkeys(inputs, "an input file")
    for k, out in enumerate(outputs):
        for src, what in inputs.items():
            if _same_file(out, src):
                where = "" if what == "the input file" else f" {src}"
                raise SurgeonError(f"{out}: output is {what}{where} (or a link to it); refusing to overwrite the input")
        for other in outputs[:k]:
            if _same_file(out, other):
                raise SurgeonError(f"{out}: given for two outputs ({other}); refused")
        folder = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(folder):
            raise SurgeonError(f"{out}: output folder {folder} does not exist")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise SurgeonError(f"{out}: output folder {folder} is not writable")
        if os.path.isdir(out):
            raise SurgeonError(f"{out}: is a folder")


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
                if tensor.HasField("raw_data"):
                    raw = tensor.raw_data
                    check_raw_size(tensor, len(raw))
                else:
                    raw = numpy_helper.from_array(tensor_to_array(tensor)).raw_data
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
               restore: bool = True, texts: dict | None = None) -> None:
    """Write atomically. ``external_data=None`` keeps the input's choice, and turns it on past 2 GB.

    ``texts`` ({path: text}, e.g. a report) are written with the model: all appear, or none.
    Writing external data points the model's tensors at the new file; ``restore`` puts them
    back afterwards (callers that discard the model pass False and save a copy of the weights).
    """
    out_path = os.fspath(out_path)
    texts = {os.fspath(k): v for k, v in (texts or {}).items()}
    # Sizing the weights from their dims: upb's ByteSize() encodes the whole model to count it.
    too_big = model_data_bytes(loaded) > PROTOBUF_LIMIT
    if external_data is None:
        external_data = bool(loaded.external) or too_big
    if not external_data and too_big:
        raise SurgeonError(f"{out_path}: model exceeds protobuf's 2 GB limit; write it with --external-data")
    name = os.path.basename(out_path)
    data_path = os.path.join(os.path.dirname(out_path), name + ".data") if external_data else None
    check_outputs([out_path] + ([data_path] if data_path else []) + list(texts), input_files(loaded))
    staged: list[tuple[str, str]] = []  # (temp, final), renamed in this order
    placed: list[str] = []
    undo, done = [], False
    try:
        if data_path:
            fd, tmp = _temp_for(data_path)
            staged.append((tmp, data_path))
            try:
                _externalise(loaded, fd, name + ".data", restore, undo)
            finally:
                os.close(fd)
        else:
            _internalise(loaded)
        fd, tmp = _temp_for(out_path)
        staged.append((tmp, out_path))
        with os.fdopen(fd, "wb") as f:
            write_model(loaded.proto, f)  # streamed: no model-sized buffer
        for path, text in texts.items():
            fd, tmp = _temp_for(path)
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
        for tmp, final in staged:
            os.replace(tmp, final)
            placed.append(final)
        done = True
    except OSError as exc:
        raise SurgeonError(f"{out_path}: cannot write ({exc.strerror or exc})") from None
    finally:
        left = [tmp for tmp, _ in staged[len(placed):]]
        for path in left + ([] if done else placed):  # one failed: the ones placed go too
            try:
                os.unlink(path)
            except OSError:
                pass
        _restore(undo)


def _temp_for(path: str) -> tuple[int, str]:
    """A new file beside ``path`` (same folder, so the rename is atomic)."""
    folder = os.path.dirname(os.path.abspath(path))
    return tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)


def _internalise(loaded: LoadedModel) -> None:
    """Read external tensors into the model (for writing a single self-contained file)."""
    for tensor in iter_tensors(loaded.proto.graph):
        if tensor.data_location == TensorProto.EXTERNAL:
            array = tensor_to_array(tensor, loaded)
            loaded.external.pop(tensor.name, None)
            del tensor.external_data[:]
            tensor.data_location = TensorProto.DEFAULT
            tensor.raw_data = numpy_helper.from_array(array).raw_data


def write_text_atomic(path: str | os.PathLike, text: str, inputs: Iterable[str] = ()) -> None:
    """Reports and the like: same temp-then-rename rule as models; never onto ``inputs``, nor
    onto any model or data file this process has loaded (a command's report never replaces
    the model it reports on)."""
    path = os.fspath(path)
    check_outputs([path], {**dict.fromkeys(inputs, "an input file"), **_READ})
    tmp = None
    try:
        fd, tmp = _temp_for(path)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise SurgeonError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
