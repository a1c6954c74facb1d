"""Loading models safely (saving: io/save.py).

- Weights kept in external data are not read at load: the engine reads the few constants it
  needs on demand and the writer copies the rest file-to-file, so a 3 GB model costs little more
  than a 30 MB one.
- An external-data location that leaves the model's folder (``../``, absolute, or through a
  symbolic link) is refused, and so is external data shorter than its tensor.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import stat
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto, numpy_helper

from . import homes
from ..arguments import MODEL_TYPES, check_path, kind_of
from ..errors import ArgumentTypeError
from .graphsurgeon import is_graph
from ..graph.order import sort_graph
from .datafile import ExternalRef, resolve
from ..errors import InvalidModelError
from ..graph.node import subgraphs_of
from ..graph.isolated import Aborted, run_isolated
from ..graph.propagation import propagation_hazard
from .wire import tensor_nbytes

_KNOWN_TYPES = set(TensorProto.DataType.values()) - {TensorProto.UNDEFINED}
_READ: dict[str, str] = {}  # every model and data file load_model has read in this process

def check_model_argument(model, what: str = "model") -> None:
    """A model argument: a path (str or os.PathLike), a ModelProto, a LoadedModel or a gs.Graph."""
    if isinstance(model, (ModelProto, LoadedModel)) or is_graph(model):
        return
    if hasattr(model, "report") and isinstance(getattr(model, "model", None), ModelProto):
        raise ArgumentTypeError(f"{what}: got a {type(model).__name__}; pass its .model (or save it with "
                                "surgeon.save(result, path))")
    if isinstance(model, (bytes, bytearray, memoryview)):
        raise ArgumentTypeError(f"{what}: got {kind_of(model)}; pass {MODEL_TYPES} "
                                "(serialised bytes: onnx.load_model_from_string(data))")
    if isinstance(model, str) or (isinstance(model, os.PathLike) and isinstance(os.fspath(model), str)):
        check_path(model, what)
        return
    raise ArgumentTypeError(f"{what}: expected {MODEL_TYPES}, got {kind_of(model)}")


@dataclass
class LoadedModel:
    """A model and where its external tensors live (name -> file range)."""

    proto: ModelProto
    path: str | None = None
    external: dict[str, ExternalRef] = field(default_factory=dict)  # keyed by tensor name
    # For a model given in memory that surgeon handed back (homes.py): the folder its external
    # data locations are relative to.
    data_dir: str | None = None

    @property
    def base_dir(self) -> str:
        if self.path:
            return os.path.dirname(os.path.abspath(self.path))
        return self.data_dir or os.getcwd()


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
        raise InvalidModelError(f"{label}: a name in the model is not valid UTF-8{f' ({bad!r})' if bad else ''}; "
                           "refused") from None
    if b"location" not in skeleton:  # the key every external reference carries
        return
    for node in (*_nodes(proto.graph), *(n for f in proto.functions for n in f.node)):
        for attr in node.attribute:
            if any(t.data_location == TensorProto.EXTERNAL for t in [attr.t, *attr.tensors]):
                raise InvalidModelError(f"{label}: node {node.name!r} holds a constant in external data (only "
                                   "initializers may); refused")


def load_model(path: str | os.PathLike) -> LoadedModel:
    """Read and check a model file; external tensors are located and checked, not read."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InvalidModelError(f"{path}: no such file") from None
    except OSError as exc:
        raise InvalidModelError(f"{path}: cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InvalidModelError(f"{path}: is a folder, not a model file")
    if not stat.S_ISREG(st.st_mode):
        raise InvalidModelError(f"{path}: not a regular file")
    if st.st_size == 0:
        raise InvalidModelError(f"{path}: file is empty")
    try:
        with open(path, "rb") as f:
            proto = onnx.load_model_from_string(f.read())
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InvalidModelError(f"{path}: not a valid ONNX model (truncated or not protobuf: {exc})") from None
    except OSError as exc:
        raise InvalidModelError(f"{path}: cannot read ({exc.strerror})") from None
    loaded = LoadedModel(proto, path)
    check_model(loaded, path)
    _READ.update((os.path.abspath(p), what) for p, what in input_files(loaded).items())
    return loaded


def check_model(loaded: LoadedModel, label: str, structure: bool = True) -> None:
    """What a model must pass before anything reads it, and where its external data is.
    ``structure=False`` (models built in memory) skips the ONNX checker, as before."""
    proto = loaded.proto
    if structure and (proto.ir_version <= 0 or not proto.HasField("graph") or not proto.opset_import):
        raise InvalidModelError(f"{label}: not an ONNX model (no IR version, graph or opset import)")
    skeleton = skeleton_model(proto).SerializeToString()
    check_text(skeleton, proto, label)
    for tensor in iter_tensors(proto.graph):
        if tensor.data_type not in _KNOWN_TYPES:
            raise InvalidModelError(f"{label}: initializer {tensor.name!r} has an unknown element type "
                                    f"({tensor.data_type})")
        if any(d < 0 for d in tensor.dims):
            raise InvalidModelError(f"{label}: initializer {tensor.name!r} has negative dims {list(tensor.dims)}")
        if tensor.data_location == TensorProto.EXTERNAL:
            if loaded.path is None and loaded.data_dir is None:
                raise InvalidModelError(f"tensor {tensor.name!r} refers to external data, but the model was given "
                                        "in memory and surgeon does not know its folder: pass its path instead")
            if any(type(e.key) is not str or type(e.value) is not str for e in tensor.external_data):
                raise InvalidModelError(f"{label}: tensor {tensor.name!r}: its external data location is not "
                                        "valid UTF-8")
            if tensor.name in loaded.external:  # the data is looked up by name
                raise InvalidModelError(f"{label}: two initializers named {tensor.name!r} live in external data; "
                                        "refused")
            loaded.external[tensor.name] = resolve(tensor, loaded.base_dir)
    if structure:
        if sort_graph(proto.graph):  # out of order as some tools write it: onnxruntime runs it
            skeleton = skeleton_model(proto).SerializeToString()
        check_graph(skeleton, label)
        check_inference(proto, label)


def load_model_proto(model: ModelProto | LoadedModel | str | os.PathLike) -> LoadedModel:
    """Accept a path, a ModelProto or a LoadedModel (library entry points take any of them). A
    ModelProto surgeon handed back finds its external data where it was (homes.py)."""
    if isinstance(model, LoadedModel):
        return model
    if isinstance(model, ModelProto):
        return load_in_memory(model, homes.folder_of(model))
    check_model_argument(model)
    return load_model(model)


def load_copy(model: ModelProto | LoadedModel | str | os.PathLike) -> LoadedModel:
    """As ``load_model_proto``, on a copy of a ModelProto: the caller's model is never modified."""
    if isinstance(model, ModelProto):
        copy = ModelProto()
        copy.CopyFrom(model)
        return load_in_memory(copy, homes.folder_of(model))  # looked up by the caller's model, not the copy
    return load_model_proto(model)


def load_in_memory(proto: ModelProto, data_dir: str | None = None) -> LoadedModel:
    """A model given in memory, checked; ``data_dir``: where its external data is (homes.py)."""
    loaded = LoadedModel(proto, data_dir=data_dir)
    check_model(loaded, "model", structure=False)
    return loaded


def remember_home(loaded: LoadedModel) -> None:
    """A model about to be handed back in memory: where its external data is, for when it comes back."""
    if loaded.external:
        homes.remember(loaded.proto, loaded.base_dir)


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
        raise InvalidModelError(f"{label}: fails the ONNX checker: {first}") from None


def check_inference(proto: ModelProto, label: str) -> None:
    """onnx's shape inference, as surgeon runs it (``infer_skeleton``), must not abort on the graph:
    onnxruntime runs it when it loads the model, and an abort in this process would take surgeon
    down with no word. Checked once per graph in a child (graph/isolated.py); graphs already
    checked in this process are known by their skeleton's digest."""
    skeleton = skeleton_model(proto, keep_small=64)
    digest = hashlib.sha1(skeleton.SerializeToString()).digest()
    if digest in _INFERRED:
        return
    try:
        run_isolated(lambda: (_infer(skeleton, propagate=True), b"")[1])
    except Aborted as exc:
        raise InvalidModelError(f"{label}: onnx's shape inference aborts on it (signal {exc}): a malformed graph (a "
                                "dim that inference makes negative, such as an input smaller than a kernel), which "
                                "onnxruntime aborts loading too") from None
    if len(_INFERRED) > 512:
        _INFERRED.clear()
    _INFERRED.add(digest)


_INFERRED: set = set()  # skeleton digests whose inference ran to its end


def skeleton_model(proto: ModelProto, keep_small: int = 0, value_info: bool = True) -> ModelProto:
    """A copy of the model whose top-level initializers are typed inputs (no data).

    Initializers with at most ``keep_small`` elements keep their data, so shape inference can
    read small shape tensors. ``value_info=False`` leaves the model's declarations of its
    intermediate values out (inference then derives them from the inputs alone).
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
    if value_info:
        g.value_info.extend(src.value_info)
    listed = {i.name for i in src.input}
    overridable = listed if proto.ir_version >= 4 else set()  # a default a caller may replace: no data
    for init in src.initializer:
        numel = math.prod(init.dims)
        if numel <= keep_small and init.data_location != TensorProto.EXTERNAL and init.name not in overridable:
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


def infer_skeleton(proto: ModelProto, keep_small: int = 64, value_info: bool = True,
                   propagate: bool = True) -> ModelProto | None:
    """ONNX shape inference on the weight-free skeleton (None when it fails), with data
    propagation (sizes computed by Shape -> Gather -> Concat chains) unless ``propagate`` is
    False, a 1-D value of the graph is too long for it or it would crash
    (``propagation_hazard``): then without. ``value_info=False``: from the inputs alone, not
    believing the model's own declarations."""
    return _infer(skeleton_model(proto, keep_small, value_info), propagate)


def _infer(skeleton: ModelProto, propagate: bool) -> ModelProto | None:
    try:
        plain = onnx.shape_inference.infer_shapes(skeleton)
        if not propagate or _long_vector(plain.graph) or propagation_hazard(skeleton):
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
            raise InvalidModelError(f"tensor {tensor.name!r}: external data cannot be located")
        with open(ref.path, "rb") as f:
            f.seek(ref.offset)
            raw = f.read(ref.length)
        if len(raw) != ref.length:
            raise InvalidModelError(f"tensor {tensor.name!r}: external data file {ref.path} shrank while being read")
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
        raise InvalidModelError(f"tensor {tensor.name!r}: its data does not fit its dims {list(tensor.dims)} and "
                           f"type ({text[0] if text else type(exc).__name__})") from None


def model_data_bytes(loaded: LoadedModel) -> int:
    return sum(tensor_nbytes(t) for t in iter_tensors(loaded.proto.graph))


def files_read() -> dict[str, str]:
    """Every model and data file ``load_model`` has read in this process, with what it is."""
    return dict(_READ)


def input_files(loaded: LoadedModel) -> dict[str, str]:
    """The files a model was read from, each with what it is: the model, its external data."""
    found = {loaded.path: "the input file"} if loaded.path else {}
    found.update((path, "the input's external data") for path in sorted({r.path for r in loaded.external.values()}))
    return found
