"""Asks the installed OpenVINO itself whether it converts a node: the same one-node model as the
onnxruntime probe (the node's opsets, attributes, input types and shapes, small constants) is
read by OpenVINO's ONNX frontend with the deployment's extensions added, and, where every input's
rank is known, compiled for the CPU. Answers are cached by the node's signature."""

from __future__ import annotations

from ..runtime.openvino import new_core, ov_message
from .ort_probe import Probe


class OvProbe(Probe):
    def __init__(self, view, extensions=()):
        super().__init__(view)
        self.core = new_core(extensions)

    def _session(self, model, feeds) -> str | None:
        try:
            converted = self.core.read_model(model.SerializeToString(), b"")
            if all(vi.type.tensor_type.HasField("shape") for vi in model.graph.input):
                self.core.compile_model(converted, "CPU")  # the CPU plugin refuses unknown ranks itself
        except Exception as exc:  # OpenVINO's own words are the finding
            return ov_message(exc)
        return None


def openvino_version() -> str | None:
    """The installed OpenVINO release, None when the package is missing."""
    try:
        import openvino
    except ImportError:
        return None
    return openvino.__version__.split("-")[0]
