"""Which runner runs a model, and the runners kept.

``make_runner`` picks the runner for the engine asked for: onnxruntime stages (program.py), or the
whole model in OpenVINO (openvino.py). ``get_runner`` keeps runners by what the model is (path +
mtime, or a hash of its bytes and where its external data is), the device and the custom ops the
plugin set brings, so ``validate`` twice, or ``run`` then ``validate``, builds each session once.

Threads share the runners: a runner is built once per key (a second thread asking for it waits).
A forked child (``multiprocessing``'s default on Linux) starts with none: onnxruntime's sessions
do not survive a fork (their thread pools stay in the parent), and even freeing one there blocks
forever, so the child sets the inherited ones aside, never to be freed, and builds its own.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict

from onnx import ModelProto

from ..io import homes
from ..errors import InvalidArgumentError, SurgeonError
from ..io.load import LoadedModel, check_model_argument, load_in_memory, load_model
from .device import providers_for
from ..forksafe import after_fork_in_child, keep_forever
from .openvino import OpenVinoRunner
from .program import Runner

CACHE_SIZE = 4

_cache: "OrderedDict[tuple, Runner]" = OrderedDict()
_cache_lock = threading.Lock()
_building: dict[tuple, threading.Lock] = {}  # key -> held while that runner is built


def _fingerprint(model) -> tuple[tuple, LoadedModel | None, bytes | None]:
    """A cache key for the model, plus what was already read while making it."""
    if not isinstance(model, (LoadedModel, ModelProto)):
        check_model_argument(model)  # a wrong type, an empty path: one line, before anything reads it
    if isinstance(model, (str, os.PathLike)):
        path = os.path.realpath(os.fspath(model))
        try:
            st = os.stat(path)
        except OSError:
            return ("path", path, None), None, None  # load_model will say what is wrong
        return ("path", path, st.st_mtime_ns, st.st_size), None, None
    if isinstance(model, LoadedModel):
        payload = _serialise(model.proto)
        refs = tuple(sorted((k, r.path, r.offset, r.length) for k, r in model.external.items()))
        return ("loaded", hashlib.blake2b(payload, digest_size=20).hexdigest(), refs), None, payload
    if isinstance(model, ModelProto):
        payload = _serialise(model)
        return ("proto", hashlib.blake2b(payload, digest_size=20).hexdigest(), homes.folder_of(model)), None, payload
    raise SurgeonError(f"expected a model path, ModelProto or LoadedModel, got {type(model).__name__}")


def _serialise(proto: ModelProto) -> bytes:
    try:
        return proto.SerializeToString()
    except (ValueError, RuntimeError) as exc:  # protobuf's 2 GB limit
        raise SurgeonError(f"the model cannot be serialised in memory ({exc}); save it with external data "
                           "and pass its path") from None


def _own_copy(model, payload: bytes | None) -> LoadedModel:
    """A LoadedModel the runner owns: later edits to the caller's proto cannot reach it."""
    if isinstance(model, (str, os.PathLike)):
        return load_model(model)
    proto = ModelProto()
    proto.ParseFromString(payload)
    if isinstance(model, LoadedModel):
        return LoadedModel(proto, model.path, dict(model.external), model.data_dir)
    return load_in_memory(proto, homes.folder_of(model))


def make_runner(loaded: LoadedModel, plugins, device: str = "cpu", engine: str = "auto",
                optimize: bool = True) -> Runner:
    """A new runner (not cached): onnxruntime stages, or for ``engine="openvino"`` the whole model in
    OpenVINO (openvino.py)."""
    if engine == "openvino":
        return OpenVinoRunner(loaded, plugins, device, engine, optimize)
    return Runner(loaded, plugins, device, engine, optimize)


def get_runner(model, plugins, device: str = "cpu", engine: str = "auto", optimize: bool = True) -> Runner:
    """The cached runner for ``model`` (a path, ModelProto or LoadedModel) with the custom ops of
    ``plugins`` (a PluginSet), built on first use; ``optimize=False``: onnxruntime runs the
    graph as written, no graph optimisation (the reference ``validate`` holds rewrites to)."""
    if engine == "openvino" and device != "cpu":
        raise InvalidArgumentError("engine 'openvino' runs on the CPU: use --device cpu")
    providers_for(device)  # a missing device is reported before any work
    base, _, payload = _fingerprint(model)
    key = base + (device, engine, optimize, plugins.fingerprint())
    with _cache_lock:
        runner = _cached(key)
        if runner is not None:
            return runner
        building = _building.setdefault(key, threading.Lock())
    with building:  # one build per key: a second thread waits for it and takes the same runner
        with _cache_lock:
            runner = _cached(key)
        if runner is None:
            runner = make_runner(_own_copy(model, payload), plugins, device, engine, optimize)
            with _cache_lock:
                _cache[key] = runner
                while len(_cache) > CACHE_SIZE:
                    _cache.popitem(last=False)
    with _cache_lock:
        if _building.get(key) is building:
            del _building[key]
    return runner


def _cached(key: tuple) -> Runner | None:
    runner = _cache.get(key)
    if runner is not None:
        _cache.move_to_end(key)
    return runner


def clear_cache() -> None:
    """Drop every cached runner (and the sessions it holds)."""
    with _cache_lock:
        _cache.clear()


def cached_count() -> int:
    """How many runners are kept (for tests)."""
    with _cache_lock:
        return len(_cache)


def _after_fork_in_child() -> None:
    """The parent's runners are unusable here and freeing them could block: set them aside for
    good (their onnxruntime sessions would be kept anyway, forksafe.py; this keeps the rest too,
    OpenVINO's compiled models included)."""
    global _cache, _cache_lock, _building
    keep_forever(_cache.values())
    _cache, _cache_lock, _building = OrderedDict(), threading.Lock(), {}


after_fork_in_child(_after_fork_in_child)
