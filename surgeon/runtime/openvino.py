"""``engine="openvino"``: the whole model in OpenVINO on the CPU, read by its ONNX frontend with
the plugins' OpenVINO extensions added (``CustomOp.openvino_extension``), compiled with float32
inference precision (the CPU plugin's default is bf16 on CPUs that have it, which rounds what
validation compares).  Values other than the outputs (validation reads the original's at each
rewrite's boundary) are added as outputs by tensor name before compiling.
"""

from __future__ import annotations

import re
import threading
from typing import Sequence

import numpy as np

from ..errors import SurgeonError
from ..graph.order import sort_graph
from ..io.load import LoadedModel, iter_tensors, tensor_to_array
from .engines import choose
from .inputs import check_feeds, input_specs
from .program import Runner

PRECISION = {"INFERENCE_PRECISION_HINT": "f32"}  # exact float32, as onnxruntime computes


class OpenVinoRunner(Runner):
    """A Runner (same interface: ``run``, ``plan``, ``specs``, ``engine``...) whose model runs in
    one OpenVINO compiled model per set of requested values, instead of onnxruntime stages."""

    def __init__(self, loaded: LoadedModel, plugins, device: str = "cpu", engine: str = "openvino",
                 optimize: bool = True):
        self.loaded, self.proto, self.device = loaded, loaded.proto, device
        self.engine = choose(self.proto, plugins, device, engine)
        if not optimize:  # validate's reference: onnxruntime can run a graph as written, OpenVINO cannot
            self.engine.notes.append("OpenVINO applies its own graph transformations when it compiles (they "
                                     "cannot be turned off): the models did not run exactly as written")
        self.specs = input_specs(self.proto)
        self.output_names = [o.name for o in self.proto.graph.output]
        self._compiled: dict[tuple[str, ...], object] = {}
        self._lock = threading.Lock()
        self._core = None

    @property
    def sessions_created(self) -> int:
        return len(self._compiled)

    def plan(self, outputs: Sequence[str] | None = None):
        """The compiled model computing ``outputs`` (compiled on first use: a node OpenVINO cannot
        convert is an error here, as a missing kernel is for onnxruntime)."""
        key = tuple(outputs) if outputs is not None else tuple(self.output_names)
        with self._lock:
            if key not in self._compiled:
                self._compiled[key] = self._compile(list(key))
            return self._compiled[key]

    def run(self, feeds: dict[str, np.ndarray], outputs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        check_feeds(self.specs, feeds)
        if outputs is not None:
            outputs = list(dict.fromkeys(o for o in outputs if o))
        given = self._given(feeds, outputs or ())
        compiled = self.plan([o for o in outputs if o not in given] if outputs is not None else None)
        request = compiled.create_infer_request()
        try:  # asynchronously: OpenVINO 2026.4's CPU plugin loses run-time errors of a synchronous infer() on one thread
            # np.asarray, not np.ascontiguousarray: that makes a 0-d array (an If's condition) 1-d.
            request.start_async({k: np.asarray(v, order="C") for k, v in feeds.items()})
            request.wait()
        except Exception as exc:
            raise SurgeonError(f"OpenVINO failed running {self._label()}: {ov_message(exc)}") from None
        found = {}
        for port, tensor in zip(compiled.outputs, request.output_tensors):
            for name in port.get_names():
                found[name] = np.array(tensor.data, copy=True)  # the request reuses its buffers
        wanted = outputs if outputs is not None else self.output_names
        return {name: given[name] if name in given else found[name] for name in wanted}

    def _given(self, feeds, wanted) -> dict[str, np.ndarray]:
        """Asked-for values that are inputs or weights (validation asks for what a rewrite reads):
        OpenVINO has no tensor by that name to add as an output once it folds a weight in."""
        weights = {t.name: t for t in self.proto.graph.initializer}
        found = {}
        for name in wanted:
            if name in self.output_names:
                continue
            if name in feeds:
                found[name] = feeds[name]
            elif name in weights:
                found[name] = tensor_to_array(weights[name], self.loaded)
        return found

    def _compile(self, wanted: list[str]):
        core = self._ov_core()
        try:
            model = self._read(core)
            present = {name for port in model.outputs for name in port.get_names()}
            extra = [name for name in wanted if name not in present]
            if extra:
                model.add_outputs(extra)
            return core.compile_model(model, "CPU", PRECISION)
        except Exception as exc:
            raise SurgeonError(f"OpenVINO cannot load {self._label()}: {ov_message(exc)}") from None

    def _ov_core(self):
        if self._core is None:
            self._core = new_core(self.engine.libraries)
        return self._core

    def _read(self, core):
        # From the runner's own proto, not the file: a model given in memory may differ from it.
        sort_graph(self.proto.graph)  # OpenVINO converts nodes in the order given
        return core.read_model(_inline(self.loaded).SerializeToString(), b"")

    def _label(self) -> str:
        return self.loaded.path or "the model"


def new_core(extensions: Sequence[str] = ()):
    """An ``openvino.Core`` with ``extensions`` (library paths) added; one line when openvino is
    missing or an extension does not load."""
    try:
        import openvino
    except ImportError:
        raise SurgeonError("engine 'openvino' needs the openvino package (`pip install openvino`)") from None
    core = openvino.Core()
    for path in extensions:
        try:
            core.add_extension(path)
        except Exception as exc:
            raise SurgeonError(f"OpenVINO cannot load the extension {path}: {ov_message(exc)}") from None
    return core


def _inline(loaded: LoadedModel):
    """The model with its external tensors read in (OpenVINO reads a model given as bytes whole;
    past protobuf's 2 GB that is one line saying so)."""
    if not loaded.external:
        return loaded.proto
    from onnx import ModelProto, numpy_helper

    copy = ModelProto()
    copy.CopyFrom(loaded.proto)
    for tensor in iter_tensors(copy.graph):
        if tensor.name in loaded.external:
            tensor.CopyFrom(numpy_helper.from_array(tensor_to_array(tensor, loaded), tensor.name))
    if copy.ByteSize() >= 2 ** 31:
        raise SurgeonError("engine 'openvino' reads the model from memory, and with its external data it is over "
                           "protobuf's 2 GB; run it in OpenVINO yourself (core.read_model(path))")
    return copy


# OpenVINO's errors: a stack of "Exception from FILE:LINE" and "Check 'COND' failed at FILE:LINE"
# lines around the message; a model that does not convert lists the failed ops' messages, then a
# summary naming ops with no conversion rule (the root cause: the failures listed first are often
# nodes downstream of it, whose input rank became unknown).
_NOISE = re.compile(r"^(Caught exception: )?(Exception from \S+|Check '.*' failed at \S+|FrontEnd API failed with \w+:?|Model wasn't "
                    r"fully converted\.?.*|Failed operations detailed log:|Summary:|Node \S+ of type \w+|"
                    r"-- Conversion is failed for: .*|-- \S+ with a message:)$")
_NO_RULE = re.compile(r"-- No conversion rule found for operations: (.*)")
_NODE = re.compile(r"While validating ONNX node '<Node\(([^)]*)\): ([^>]*)>':\s*")


def ov_message(exc: Exception) -> str:
    """One line for an OpenVINO error: the ops it has no conversion for, else the first message."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in lines:
        missing = _NO_RULE.match(line)
        if missing:
            return f"OpenVINO has no conversion for {missing.group(1)}"
    lines = [line for line in lines if not _NOISE.match(line)]
    for k, line in enumerate(lines):
        node = _NODE.match(line)
        if node is None:
            return line
        rest = line[node.end():].strip() or (lines[k + 1] if k + 1 < len(lines) else "")
        if rest:  # the node named once: OpenVINO's words, or ours, which name it already
            return rest if f"'{node.group(2)}'" in rest else f"node {node.group(2)!r} ({node.group(1)}): {rest}"
    return str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
