"""Saving models safely: no output may resolve to an input file (hard and symbolic links
included), checked before anything is written; outputs are written to temp files and renamed
into place together (io/atomic.py), and on any error nothing is left behind."""

from __future__ import annotations

import os
from typing import Iterable, Mapping

from onnx import TensorProto, numpy_helper

from .. import arguments
from .atomic import Outputs, write_file
from .datafile import DataFileWriter
from ..errors import CannotWriteError, cannot_write
from .graphsurgeon import as_model
from .load import (LoadedModel, check_model_argument, files_read, input_files, iter_tensors, load_copy, model_data_bytes,
                   tensor_to_array)
from .wire import check_raw_size, tensor_nbytes, write_model

# Protobuf refuses to serialise a message of 2 GiB or more; leave room for the graph itself.
PROTOBUF_LIMIT = 2**31 - 64 * 2**20
# Tensors at least this large go to the external data file when writing external data.
EXTERNAL_THRESHOLD = 1024


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
                raise CannotWriteError(f"{out}: output is {what}{where} (or a link to it); refusing to overwrite "
                                       "the input", path=out)
        for other in outputs[:k]:
            if _same_file(out, other):
                raise CannotWriteError(f"{out}: given for two outputs ({other}); refused", path=out)
        folder = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(folder):
            raise CannotWriteError(f"{out}: output folder {folder} does not exist", path=out)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CannotWriteError(f"{out}: output folder {folder} is not writable", path=out)
        if os.path.isdir(out):
            raise CannotWriteError(f"{out}: is a folder", path=out)


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
        raise CannotWriteError(f"{out_path}: model exceeds protobuf's 2 GB limit; write it with --external-data",
                               path=out_path)
    name = os.path.basename(out_path)
    data_path = os.path.join(os.path.dirname(out_path), name + ".data") if external_data else None
    check_outputs([out_path] + ([data_path] if data_path else []) + list(texts), input_files(loaded))
    undo: list = []
    try:
        with Outputs() as out:
            if data_path:
                fd = out.new(data_path)
                try:
                    _externalise(loaded, fd, name + ".data", restore, undo)
                finally:
                    os.close(fd)
            else:
                _internalise(loaded)
            with out.open(out_path) as f:
                write_model(loaded.proto, f)  # streamed: no model-sized buffer
            for path, text in texts.items():
                with out.open(path, text=True) as f:
                    f.write(text)
    except OSError as exc:
        raise cannot_write(out_path, exc) from None
    finally:
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


def write_text_atomic(path: str | os.PathLike, text: str, inputs: Iterable[str] = ()) -> None:
    """Reports and the like: same temp-then-rename rule as models; never onto ``inputs``, nor
    onto any model or data file this process has loaded (a command's report never replaces
    the model it reports on)."""
    path = os.fspath(path)
    check_outputs([path], {**dict.fromkeys(inputs, "an input file"), **files_read()})
    try:
        write_file(path, lambda f: f.write(text), text=True)
    except OSError as exc:
        raise cannot_write(path, exc) from None


def save(model, path: str | os.PathLike, *, external_data: bool | None = None) -> None:
    """Write ``model`` (a FuseResult or UnfuseResult, or a model: ``result.model``, a
    ModelProto, a gs.Graph, a path) to ``path``. ``external_data``: weights in ``PATH.data``
    (default: as the model keeps them, and past 2 GB); ``False`` reads them into one file.
    ``model`` is never modified."""
    if hasattr(model, "report") and hasattr(model, "model"):  # a FuseResult / UnfuseResult
        model = model.model
    check_model_argument(model)
    arguments.check_path(path, "path")
    arguments.check_type(external_data, bool, "external_data", "a bool", optional=True)
    loaded = load_copy(as_model(model))  # a ModelProto is copied: the caller's stays as it is
    save_model(loaded, path, external_data=external_data, restore=loaded is model)  # a LoadedModel is put back
