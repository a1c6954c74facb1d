"""Write a ModelProto to a file in pieces, never holding its whole serialisation in memory.

``SerializeToString`` builds one buffer as large as the model (370 MB of weights -> a fresh
370 MB allocation, page-faulted in, then copied to the file). Here the weights' bytes go to
the file one tensor at a time, so the biggest temporary is the largest single weight.

The output is ordinary protobuf wire format that any parser reads back into an equal
message. The model's and the graph's fields come in field-number order, as
``SerializeToString`` writes them: OpenVINO's ONNX frontend recognises a file by its first
three distinct top-level fields and rejects one where a field repeats before that (two opset
imports written ahead of the graph: "Unable to read the model"). Only a large tensor's
``raw_data`` comes after its other fields, which protobuf allows.
"""

from __future__ import annotations

import math
from typing import BinaryIO

import onnx
from google.protobuf.message import Message
from onnx import GraphProto, ModelProto, TensorProto

from ..errors import InvalidModelError

try:
    from google.protobuf.unknown_fields import UnknownFieldSet
except ImportError:  # protobuf before 4.22
    UnknownFieldSet = None

# (field number << 3) | 2: a length-delimited field.
_GRAPH_NUMBER, _INITIALIZER_NUMBER = 7, 5  # ModelProto.graph, GraphProto.initializer
_MODEL_GRAPH = bytes([_GRAPH_NUMBER << 3 | 2])
_GRAPH_INITIALIZER = bytes([_INITIALIZER_NUMBER << 3 | 2])
_TENSOR_RAW_DATA = bytes([9 << 3 | 2])
# Tensors smaller than this are serialised whole: splitting them saves nothing.
_SPLIT_BYTES = 1 << 16


def varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# Element types stored several to a byte (onnx packs them low bits first).
_PACKED_BITS = {TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.FLOAT4E2M1: 4,
                getattr(TensorProto, "INT2", -1): 2, getattr(TensorProto, "UINT2", -1): 2}


def data_nbytes(tensor: TensorProto) -> int | None:
    """Bytes a tensor's raw data must hold, from its dims and type; None when its type has no
    fixed size (strings) or is unknown, or a dim is negative."""
    numel = math.prod(tensor.dims)
    if numel < 0 or any(d < 0 for d in tensor.dims):
        return None
    bits = _PACKED_BITS.get(tensor.data_type)
    if bits:
        return (numel * bits + 7) // 8
    if tensor.data_type in (TensorProto.STRING, TensorProto.UNDEFINED):
        return None
    try:
        return numel * onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        return None


def tensor_nbytes(tensor: TensorProto) -> int:
    """Bytes of a tensor's data, from its dims and type (reading raw_data would copy it)."""
    size = data_nbytes(tensor)
    return tensor.ByteSize() if size is None else size


def check_raw_size(tensor: TensorProto, raw_len: int) -> None:
    """A tensor whose raw data is shorter or longer than its dims say is refused by name."""
    need = data_nbytes(tensor)
    if need is not None and raw_len != need:
        raise InvalidModelError(f"tensor {tensor.name!r}: its data holds {raw_len} bytes, its dims "
                           f"{list(tensor.dims)} and type need {need}")


def _repeated(fd) -> bool:
    # protobuf 7 dropped FieldDescriptor.label; older releases lack is_repeated.
    flag = getattr(fd, "is_repeated", None)
    return flag if flag is not None else fd.label == fd.LABEL_REPEATED


def has_unknown_fields(message: Message) -> bool:
    """Fields this onnx does not know (a newer exporter's): ``without`` would drop them."""
    if UnknownFieldSet is None:
        return True  # cannot tell: treat as present, and serialise whole
    return len(UnknownFieldSet(message)) > 0


def without(message: Message, field: str) -> Message:
    """A copy of ``message`` without ``field`` (the others are copied as they are)."""
    return _fields(message, lambda fd: fd.name != field)


def _numbered(message: Message, low: int, high: int) -> bytes:
    """``message``'s fields numbered from ``low`` up to ``high`` (excluded), serialised."""
    return _fields(message, lambda fd: low <= fd.number < high).SerializeToString()


def _fields(message: Message, keep) -> Message:
    """A copy of ``message`` with the fields ``keep(descriptor)`` accepts."""
    copy = type(message)()
    for fd, value in message.ListFields():
        if not keep(fd):
            continue
        repeated = _repeated(fd)
        target = getattr(copy, fd.name) if repeated or fd.message_type else None
        if repeated:
            target.extend(value)
        elif fd.message_type:
            target.CopyFrom(value)
        else:
            setattr(copy, fd.name, value)
    return copy


class _Tensor:
    """One initializer, sized before it is written, keeping none of its bytes in between.

    Large raw weights: the header (every field but raw_data) is serialised and kept, and the
    bytes go to the file as they are.  The rest: sized with ByteSize, serialised when written.
    """

    __slots__ = ("tensor", "head", "raw_len", "size")

    def __init__(self, tensor: TensorProto):
        self.tensor = tensor
        self.head = None
        split = (tensor_nbytes(tensor) >= _SPLIT_BYTES and tensor.HasField("raw_data")
                 and not has_unknown_fields(tensor))
        if split:
            # Reading raw_data copies it (upb hands out new bytes): once here for its length,
            # once more in write(); neither copy is kept.
            self.raw_len = len(tensor.raw_data)
            check_raw_size(tensor, self.raw_len)
            self.head = without(tensor, "raw_data").SerializeToString()
            self.size = len(self.head) + len(_TENSOR_RAW_DATA) + len(varint(self.raw_len)) + self.raw_len
        else:
            if tensor.HasField("raw_data"):  # small: its length is cheap to read
                check_raw_size(tensor, len(tensor.raw_data))
            self.size = tensor.ByteSize()

    def write(self, f: BinaryIO) -> None:
        f.write(_GRAPH_INITIALIZER + varint(self.size))
        if self.head is None:
            f.write(self.tensor.SerializeToString())
        else:
            f.write(self.head + _TENSOR_RAW_DATA + varint(self.raw_len))
            f.write(self.tensor.raw_data)


def write_model(model: ModelProto, f: BinaryIO) -> None:
    """Write ``model`` to ``f`` as protobuf bytes that parse back into an equal model."""
    graph: GraphProto = model.graph
    if not model.HasField("graph") or len(graph.initializer) == 0 or has_unknown_fields(model) \
            or has_unknown_fields(graph):
        f.write(model.SerializeToString())
        return
    end = 1 << 29  # past the largest field number
    before, after = _numbered(graph, 0, _INITIALIZER_NUMBER), _numbered(graph, _INITIALIZER_NUMBER + 1, end)
    tensors = [_Tensor(t) for t in graph.initializer]
    weights = sum(len(_GRAPH_INITIALIZER) + len(varint(t.size)) + t.size for t in tensors)
    f.write(_numbered(model, 0, _GRAPH_NUMBER))
    f.write(_MODEL_GRAPH + varint(len(before) + weights + len(after)))
    f.write(before)
    for t in tensors:
        t.write(f)
    f.write(after)
    f.write(_numbered(model, _GRAPH_NUMBER + 1, end))
