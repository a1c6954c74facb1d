"""External data: where a tensor's bytes live (``resolve``: checked, never read), and the
external-data file of a model being written (``DataFileWriter``).

A location must stay inside the model's folder once every symbolic link is resolved (as
onnx's own check does for ``../``), name a regular file (a FIFO or device would block or never
end), and hold all the bytes the tensor's dims and type need.

The writer:

Tensors that already live in external data are copied file to file in the kernel
(copy_file_range), and neighbours in the source are copied as one range with their layout
kept, so 3 GB of weights cost a few large copies, not one call per weight.  The copies run on
a background thread while the caller goes on placing the other tensors and writing the model
(the kernel copy holds no Python lock): on a 3 GB model that hides the ~0.4 s of Python work
of a save behind the copy.  Every write goes to an explicit offset, so the two never share a
file position.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections import deque
from dataclasses import dataclass

from onnx import TensorProto

from ..errors import InvalidModelError
from .wire import data_nbytes

_CHUNK = 64 << 20  # for file systems without copy_file_range


@dataclass
class ExternalRef:
    """Where an external tensor's bytes live: [offset, offset + length) of the file at ``path``."""

    path: str
    offset: int
    length: int


_WHOLE_NUMBER = re.compile(r"[0-9]{1,19}\Z")


def _field(label: str, info: dict, key: str) -> int | None:
    text = info.get(key)
    if text is None:
        return None
    if not _WHOLE_NUMBER.match(text):
        raise InvalidModelError(f"{label}: external data {key} {text!r} is not a whole number of bytes")
    return int(text)


def resolve(tensor: TensorProto, base_dir: str) -> ExternalRef:
    """Where an external tensor's bytes are: checked against the file, not read."""
    label = f"tensor {tensor.name!r}"
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    if not location:
        raise InvalidModelError(f"{label} is marked external but names no location")
    norm = os.path.normpath(location)
    if "\0" in location or os.path.isabs(location) or norm == ".." or norm.startswith(".." + os.sep):
        raise InvalidModelError(f"{label}: external data location {location!r} leaves the model's folder; refused")
    root = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(root, norm))
    if os.path.commonpath([root, path]) != root:
        raise InvalidModelError(f"{label}: external data location {location!r} leads out of the model's folder "
                           f"through a symbolic link (to {path}); refused")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InvalidModelError(f"{label}: external data file {location!r} not found next to the model") from None
    except OSError as exc:
        raise InvalidModelError(f"{label}: external data file {location!r} cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidModelError(f"{label}: external data location {location!r} is not a regular file")
    need = data_nbytes(tensor)
    if need is None:
        raise InvalidModelError(f"{label}: external data needs a fixed-size element type and non-negative dims "
                           f"(type {tensor.data_type}, dims {list(tensor.dims)})")
    offset, length = _field(label, info, "offset") or 0, _field(label, info, "length")
    if length is not None and length != need:
        raise InvalidModelError(f"{label}: external data length {length} in {location!r} is not the {need} bytes "
                           f"its dims {list(tensor.dims)} and type need")
    if offset + need > st.st_size:
        raise InvalidModelError(f"{label}: external data file {location!r} is too short: {need} bytes needed at "
                           f"offset {offset}, the file holds {st.st_size}")
    return ExternalRef(path, offset, need)


def copy_range(src: int, src_offset: int, length: int, dst: int, dst_offset: int, name: str = "") -> None:
    """Copy ``length`` bytes between two file descriptors, at explicit offsets."""
    done = 0
    use_kernel = hasattr(os, "copy_file_range")
    while done < length:
        n = 0
        if use_kernel:
            try:
                n = os.copy_file_range(src, dst, length - done, src_offset + done, dst_offset + done)
            except OSError:
                n = 0
        if n <= 0:  # not supported across these files (or a short source): through memory
            use_kernel = False
            chunk = os.pread(src, min(length - done, _CHUNK), src_offset + done)
            if not chunk:
                raise InvalidModelError(f"{name or 'external data'}: ended early")
            n = os.pwrite(dst, chunk, dst_offset + done)
        done += n


class DataFileWriter:
    """Lays tensors out in the new data file and returns each one's offset.

    ``copy(range)`` schedules a file-to-file copy; ``write(raw)`` writes bytes now.  ``close``
    waits for the copies and raises the first error one of them met."""

    GAP = 4096  # source bytes between two tensors that are copied along rather than split on
    PART = 64 << 20  # a growing run is handed to the copier in parts this large

    def __init__(self, fd: int):
        self.fd = fd
        self.offset = 0
        self._run: list | None = None  # [path, source start, source end, output start]
        self._pending: deque[tuple] = deque()
        self._ready = threading.Condition()
        self._closing = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def copy(self, ref: ExternalRef) -> int:
        run = self._run
        if run and run[0] == ref.path and run[2] <= ref.offset <= run[2] + self.GAP:
            at = run[3] + ref.offset - run[1]
            run[2] = max(run[2], ref.offset + ref.length)
            if run[2] - run[1] >= self.PART:  # start copying what the run holds so far
                self._queue(run[0], run[1], run[2] - run[1], run[3])
                run[3] += run[2] - run[1]
                run[1] = run[2]
            return at
        self._end_run()
        self.offset += (-self.offset) % 4096  # page-aligned: file systems that clone ranges need it
        self._run = [ref.path, ref.offset, ref.offset + ref.length, self.offset]
        return self.offset

    def write(self, raw: bytes) -> int:
        self._end_run()
        self.offset += (-self.offset) % 64  # aligned for engines that mmap the file
        at, view = self.offset, memoryview(raw)
        while view:
            n = os.pwrite(self.fd, view, at + len(raw) - len(view))
            view = view[n:]
        self.offset += len(raw)
        return at

    def close(self) -> None:
        self._end_run()
        if self._thread is not None:
            with self._ready:
                self._closing = True
                self._ready.notify()
            self._thread.join()
        os.ftruncate(self.fd, self.offset)  # a trailing alignment gap still counts
        if self._error is not None:
            raise self._error

    def _end_run(self) -> None:
        if self._run is None:
            return
        path, start, end, at = self._run
        self._run = None
        self.offset = at + end - start
        if end > start:
            self._queue(path, start, end - start, at)

    def _queue(self, path: str, start: int, length: int, at: int) -> None:
        with self._ready:
            self._pending.append((path, start, length, at))
            self._ready.notify()
        if self._thread is None:
            self._thread = threading.Thread(target=self._copier, name="surgeon-data-copy", daemon=True)
            self._thread.start()

    def _copier(self) -> None:
        sources: dict[str, int] = {}
        try:
            while True:
                with self._ready:
                    while not self._pending and not self._closing:
                        self._ready.wait()
                    if not self._pending:
                        return
                    path, start, length, at = self._pending.popleft()
                if self._error is not None:
                    continue  # after a failure the rest is not copied; close() raises it
                try:
                    if path not in sources:
                        sources[path] = os.open(path, os.O_RDONLY)
                    copy_range(sources[path], start, length, self.fd, at, path)
                except BaseException as exc:
                    self._error = exc
        finally:
            for fd in sources.values():
                os.close(fd)
