"""Which engine runs a model's custom ops: the plugins' onnxruntime op libraries, or their
reference kernels between onnxruntime stages, or OpenVINO with the plugins' extensions.

``auto`` takes a library for every op that has one on this machine (the model then runs in
onnxruntime as a user's own session would) and the reference kernel for the rest; ``ort``
insists on libraries; ``reference`` never uses them; ``openvino`` runs the whole model in
OpenVINO (openvino.py), every custom op on an extension.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnx import GraphProto, ModelProto

from ..errors import InvalidArgumentError, PluginError
from ..graph.node import subgraphs_of
from .schedule import ORT_DOMAINS

ENGINES = ("auto", "ort", "reference", "openvino")


@dataclass
class Engine:
    served: dict[tuple[str, str], str] = field(default_factory=dict)  # op -> library path
    reference: list[tuple[str, str]] = field(default_factory=list)  # ops run on reference kernels
    notes: list[str] = field(default_factory=list)  # why a library was not used
    runtime: str = "onnxruntime"  # what runs the model: "onnxruntime", or "openvino" (CPU, float32)

    @property
    def libraries(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.served.values()))

    def describe(self) -> str:
        parts = ["onnxruntime" if self.runtime == "onnxruntime" else "OpenVINO CPU (float32 precision)"]
        if self.served:
            what = "op library" if self.runtime == "onnxruntime" else "extension"
            parts.append(f"{what} for {', '.join(sorted(f'{d}::{o}' for d, o in self.served))}")
        if self.reference:
            parts.append(f"reference kernels for {', '.join(sorted(f'{d}::{o}' for d, o in self.reference))}")
        return " + ".join(parts)


def custom_ops(model: ModelProto, inlined: bool = True) -> list[tuple[str, str]]:
    """(domain, op_type) of the custom nodes, bodies included, that no model-local function defines
    (``inlined=False``: those too, for an engine that does not use the functions)."""
    functions = {(f.domain, f.name) for f in model.functions} if inlined else set()
    found: dict[tuple[str, str], None] = {}

    def walk(graph: GraphProto) -> None:
        for node in graph.node:
            key = (node.domain, node.op_type)
            if node.domain not in ORT_DOMAINS and key not in functions:
                found[key] = None
            for body in subgraphs_of(node):
                walk(body)
    walk(model.graph)
    return list(found)


def choose(model: ModelProto, plugins, device: str, engine: str = "auto") -> Engine:
    if engine not in ENGINES:
        raise InvalidArgumentError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if engine == "openvino":
        return _openvino(model, plugins)
    chosen = Engine()
    for key in custom_ops(model):
        op = plugins.op(*key) if engine != "reference" else None
        if op is not None and op.ort_library is not None:
            try:
                chosen.served[key] = op.ort_library(device)
                continue
            except Exception as exc:  # no compiler or headers here: a reason, not a failure
                text = str(exc).strip().splitlines()
                reason = text[0] if text else type(exc).__name__
                if engine == "ort":
                    raise PluginError(f"engine 'ort': no onnxruntime op library for {key[0]}::{key[1]}: "
                                       f"{reason}") from None
                chosen.notes.append(f"{key[0]}::{key[1]} ran on its reference kernel: the op library is "
                                    f"unavailable ({reason})")
        elif engine == "ort":
            raise PluginError(f"engine 'ort': no plugin brings an onnxruntime op library for {key[0]}::{key[1]}")
        chosen.reference.append(key)
    return chosen


def _openvino(model: ModelProto, plugins) -> Engine:
    """Every custom op on an OpenVINO extension (OpenVINO uses no model-local function body)."""
    chosen = Engine(runtime="openvino")
    for key in custom_ops(model, inlined=False):
        op = plugins.op(*key)
        if op is None or op.openvino_extension is None:
            raise PluginError(f"engine 'openvino': no plugin brings an OpenVINO extension for {key[0]}::{key[1]}")
        try:
            chosen.served[key] = op.openvino_extension()
        except Exception as exc:  # not built, or built for another OpenVINO release: its one line
            text = str(exc).strip().splitlines()
            raise PluginError(f"engine 'openvino': no OpenVINO extension for {key[0]}::{key[1]}: "
                               f"{text[0] if text else type(exc).__name__}") from None
    return chosen
