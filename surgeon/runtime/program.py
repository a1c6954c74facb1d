"""A model made runnable: plans per set of requested values, sessions kept, runners cached.

Runners are cached by what the model is (path + mtime, or a hash of its bytes), the device and
the custom ops the plugin set brings, so ``validate`` twice, or ``run`` then ``validate``, builds
each onnxruntime session once.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np
from onnx import ModelProto

from ..errors import SurgeonError
from ..modelio import LoadedModel, load_model, load_model_proto
from .device import providers_for
from .engines import choose
from .inputs import check_feeds, input_specs
from .plan import ORT_DOMAINS, GraphPlan, Planner
from .steps import ModelContext

CACHE_SIZE = 4


class Runner:
    """Runs one model: onnxruntime, with custom nodes on the plugins' op libraries or on their
    reference kernels between onnxruntime stages (``engine``, see engines.py)."""

    def __init__(self, loaded: LoadedModel, plugins, device: str = "cpu", engine: str = "auto",
                 optimize: bool = True):
        self.loaded = loaded
        self.proto = loaded.proto
        self.device = device
        self.engine = choose(self.proto, plugins, device, engine)
        self.ctx = ModelContext(
            opsets=list(self.proto.opset_import), ir_version=self.proto.ir_version,
            functions=list(self.proto.functions), providers=providers_for(device), device=device,
            external_dir=loaded.base_dir if loaded.external else None, loaded=loaded,
            libraries=self.engine.libraries, optimize=optimize)
        self.planner = Planner(self.ctx, [(f.domain, f.name) for f in self.proto.functions], plugins,
                               self.engine.served)
        self.specs = input_specs(self.proto)
        self.output_names = [o.name for o in self.proto.graph.output]
        self._plans: dict[tuple[str, ...], GraphPlan] = {}
        self._lock = threading.Lock()

    @property
    def sessions_created(self) -> int:
        """onnxruntime sessions this runner has built (one per stage, on first run)."""
        return self.ctx.sessions

    @staticmethod
    def is_custom(node) -> bool:
        """A node of a custom op, however it runs (library, function body or reference kernel):
        what a rewrite wrote, for validation."""
        return node.domain not in ORT_DOMAINS

    def custom_nodes(self) -> list:
        """Custom nodes at the top level and in bodies, in graph order."""
        found = []

        def walk(graph):
            for node in graph.node:
                if self.is_custom(node):
                    found.append(node)
                for a in node.attribute:
                    for body in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        walk(body)
        walk(self.proto.graph)
        return found

    def plan(self, outputs: Sequence[str] | None = None) -> GraphPlan:
        key = tuple(outputs) if outputs is not None else tuple(self.output_names)
        with self._lock:
            plan = self._plans.get(key)
            if plan is None:
                available = {s.name for s in self.specs}
                plan = self.planner.compile(self.proto.graph, list(key), available)
                self._plans[key] = plan
        return plan

    def run(self, feeds: dict[str, np.ndarray], outputs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Values of ``outputs`` (default: the graph outputs; intermediates may be named too)."""
        check_feeds(self.specs, feeds)
        if outputs is not None:
            outputs = list(dict.fromkeys(o for o in outputs if o))
        return self.plan(outputs).run(dict(feeds))


_cache: "OrderedDict[tuple, Runner]" = OrderedDict()
_cache_lock = threading.Lock()


def _fingerprint(model) -> tuple[tuple, LoadedModel | None, bytes | None]:
    """A cache key for the model, plus what was already read while making it."""
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
        return ("proto", hashlib.blake2b(payload, digest_size=20).hexdigest()), None, payload
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
        return LoadedModel(proto, model.path, dict(model.external))
    return load_model_proto(proto)


def make_runner(loaded: LoadedModel, plugins, device: str = "cpu", engine: str = "auto",
                optimize: bool = True) -> Runner:
    """A new runner (not cached): onnxruntime stages, or for ``engine="openvino"`` the whole model in
    OpenVINO (openvino.py)."""
    if engine == "openvino":
        from .openvino import OpenVinoRunner

        return OpenVinoRunner(loaded, plugins, device, engine, optimize)
    return Runner(loaded, plugins, device, engine, optimize)


def get_runner(model, plugins, device: str = "cpu", engine: str = "auto", optimize: bool = True) -> Runner:
    """The cached runner for ``model`` (a path, ModelProto or LoadedModel) with the custom ops of
    ``plugins`` (a PluginSet), built on first use; ``optimize=False``: onnxruntime runs the
    graph as written, no graph optimisation (the reference ``validate`` holds rewrites to)."""
    if engine == "openvino" and device != "cpu":
        raise SurgeonError("engine 'openvino' runs on the CPU: use --device cpu")
    providers_for(device)  # a missing device is reported before any work
    base, _, payload = _fingerprint(model)
    key = base + (device, engine, optimize, plugins.fingerprint())
    with _cache_lock:
        runner = _cache.get(key)
        if runner is not None:
            _cache.move_to_end(key)
            return runner
    runner = make_runner(_own_copy(model, payload), plugins, device, engine, optimize)
    with _cache_lock:
        _cache[key] = runner
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return runner


def clear_cache() -> None:
    """Drop every cached runner (and the sessions it holds)."""
    with _cache_lock:
        _cache.clear()
